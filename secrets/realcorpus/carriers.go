package realcorpus

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/loomhq/loom"
)

// Carrier writes a secret into a message the way one kind of session
// content holds it. Fits says whether the carrier can hold s at all;
// Write returns the message and any more needles the carrier's own
// encoding makes (the base64 text of a Kubernetes secret, say).
type Carrier struct {
	ID    string
	Fits  func(s Secret) bool
	Write func(g *Gen, s Secret) (*loom.Message, []string)
}

func hasName(s Secret) bool  { return s.Name != "" && s.Assign != "" }
func hasBlock(s Secret) bool { return s.Block != "" || hasName(s) }
func oneLine(s Secret) bool  { return !strings.Contains(s.Assign, "\n") }

// ToolPart is a completed bash tool call as loom stores it: its input
// {"command": …}, its output the tool's text as a JSON string (Go's
// encoding, which writes & < > as \u0026 \u003c \u003e).
func ToolPart(command, output string) loom.Part {
	in, _ := json.Marshal(map[string]string{"command": command})
	out, _ := json.Marshal(output)
	return loom.Part{ID: loom.NewID(), Type: loom.PartTool, CallID: "toolu_" + loom.NewID(), Name: "bash", Status: loom.ToolCompleted, Input: in, Output: out}
}

// TextPart is a text part.
func TextPart(text string) loom.Part {
	return loom.Part{ID: loom.NewID(), Type: loom.PartText, Text: text}
}

// FilePart is a file the user attached, with its text.
func FilePart(path, mime, text string) loom.Part {
	name := path[strings.LastIndex(path, "/")+1:]
	return loom.Part{ID: loom.NewID(), Type: loom.PartFile, Filename: name, Mime: mime,
		Source: &loom.FileSource{Type: "file", Path: path, Text: text}}
}

// Msg returns a message of role with parts.
func Msg(role string, parts ...loom.Part) *loom.Message {
	return &loom.Message{ID: loom.NewID(), Role: role, Parts: parts}
}

func tool(command, output string) *loom.Message {
	return Msg(loom.RoleAssistant, ToolPart(command, output))
}

// Carriers are every way the corpus writes a secret into a message.
var Carriers = []Carrier{
	{"prompt-paste", hasBlock, func(g *Gen, s Secret) (*loom.Message, []string) {
		text, file, lang := g.block(s)
		intro := g.Pick("This is my "+file+" and the app still can't connect, what's wrong?",
			"Can you check this config? Deploy fails since yesterday.\n",
			"here is "+file+":", "I get a 401 with this setup:",
			"Why does `make deploy` complain about the credentials? Config below.")
		return Msg(loom.RoleUser, TextPart(intro+"\n\n"+fence(lang, text)+"\n\n"+g.Pick("", "Thanks!", "It worked on my laptop.", "Please don't change the ports."))), nil
	}},
	{"env-output", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		lines := append([]string{}, osEnv...)
		for i := 0; i < g.N(2, 6); i++ {
			lines = append(lines, envFiller[g.N(0, len(envFiller)-1)])
		}
		lines = append(lines, s.Name+"="+s.Assign)
		sort.Strings(lines)
		return tool(g.Pick("env", "printenv", "env | sort", "docker compose exec api env"), strings.Join(lines, "\n")+"\n"), nil
	}},
	{"cat-dotenv", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		f := g.Pick(".env", ".env.local", ".env.production", "apps/api/.env", ".envrc")
		return tool("cat "+f, g.envFile(s, f == ".envrc" || g.Chance(0.15))), nil
	}},
	{"curl-verbose", func(s Secret) bool { return s.Header != "" || s.Bearer || s.URL != "" }, func(g *Gen, s Secret) (*loom.Message, []string) {
		host, path := "api."+g.Pick("acme.io", "northwind.dev", "globex.com"), g.Pick("/v1/orders?limit=20", "/api/v2/users/me", "/v1/models", "/health")
		if s.URL != "" {
			if u, err := url.Parse(s.URL); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
				host, path = u.Host, u.RequestURI()
			}
		}
		hdr := s.Header
		if hdr == "" && s.Bearer {
			hdr = "Authorization: Bearer " + s.Value
		}
		var cmd strings.Builder
		cmd.WriteString("curl -v")
		if hdr != "" {
			cmd.WriteString(" -H '" + hdr + "'")
		}
		cmd.WriteString(" 'https://" + host + path + "'")
		var o strings.Builder
		o.WriteString("  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n")
		ip := fmt.Sprintf("%d.%d.%d.%d", g.N(3, 200), g.N(0, 255), g.N(0, 255), g.N(1, 254))
		o.WriteString("  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0*   Trying " + ip + ":443...\n")
		o.WriteString("* Connected to " + host + " (" + ip + ") port 443 (#0)\n* ALPN: offers h2,http/1.1\n} [5 bytes data]\n* TLSv1.3 (OUT), TLS handshake, Client hello (1):\n} [512 bytes data]\n*  CAfile: /etc/ssl/certs/ca-certificates.crt\n*  CApath: /etc/ssl/certs\n{ [5 bytes data]\n* TLSv1.3 (IN), TLS handshake, Server hello (2):\n")
		o.WriteString("* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384\n* ALPN: server accepted h2\n* Server certificate:\n*  subject: CN=" + host + "\n*  start date: Sep  2 00:00:00 2025 GMT\n*  expire date: Dec  1 23:59:59 2026 GMT\n*  subjectAltName: host \"" + host + "\" matched cert's \"" + host + "\"\n*  issuer: C=US; O=Let's Encrypt; CN=R11\n*  SSL certificate verify ok.\n")
		o.WriteString("* using HTTP/2\n* h2h3 [:method: GET]\n* h2h3 [:path: " + path + "]\n* h2h3 [:scheme: https]\n* h2h3 [:authority: " + host + "]\n* h2h3 [user-agent: curl/7.88.1]\n* h2h3 [accept: */*]\n")
		if hdr != "" {
			o.WriteString("* h2h3 [" + strings.ToLower(hdr[:strings.Index(hdr, ":")]) + ":" + hdr[strings.Index(hdr, ":")+1:] + "]\n")
		}
		o.WriteString("* Using Stream ID: 1 (easy handle 0x55d0c0e2f2c0)\n} [5 bytes data]\n> GET " + path + " HTTP/2\n> Host: " + host + "\n> user-agent: curl/7.88.1\n> accept: */*\n")
		if hdr != "" {
			o.WriteString("> " + hdr + "\n")
		}
		status := g.Pick("200", "401", "403", "200")
		o.WriteString("> \n{ [5 bytes data]\n< HTTP/2 " + status + " \n< date: Tue, 11 Nov 2025 09:14:07 GMT\n< content-type: application/json; charset=utf-8\n< content-length: " + fmt.Sprint(g.N(40, 900)) + "\n< x-request-id: " + g.UUID() + "\n< strict-transport-security: max-age=31536000\n< \n{ [312 bytes data]\n")
		o.WriteString("100   312  100   312    0     0   1954      0 --:--:-- --:--:-- --:--:--  1962\n* Connection #0 to host " + host + " left intact\n")
		if status == "200" {
			o.WriteString(`{"data":[{"id":"ord_` + g.S(alnum, 14) + `","status":"paid","total":4999,"currency":"eur"}],"has_more":false}` + "\n")
		} else {
			o.WriteString(`{"error":{"type":"authentication_error","message":"invalid credentials"}}` + "\n")
		}
		return tool(cmd.String(), o.String()), nil
	}},
	{"kubectl-secret-yaml", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		key, val := strings.ToLower(strings.ReplaceAll(s.Name, "_", "-")), s.Assign
		if s.File != "" && strings.HasSuffix(s.File, "config.json") && s.Block != "" {
			key, val = ".dockerconfigjson", s.Block
		}
		enc := b64s(val)
		name := g.Pick("app-secrets", "api-env", "orders-credentials", "ci-tokens")
		out := "apiVersion: v1\ndata:\n  " + g.Pick("LOG_LEVEL", "log-level") + ": " + b64s("info") + "\n  " + key + ": " + enc + "\nkind: Secret\nmetadata:\n  creationTimestamp: \"2025-10-0" + fmt.Sprint(g.N(1, 9)) + "T12:31:44Z\"\n  name: " + name + "\n  namespace: " + g.Pick("prod", "default", "orders") + "\n  resourceVersion: \"" + g.Digits(8) + "\"\n  uid: " + g.UUID() + "\ntype: Opaque\n"
		return tool("kubectl get secret "+name+" -o yaml", out), []string{enc}
	}},
	{"kubectl-secret-json", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		key := strings.ToLower(strings.ReplaceAll(s.Name, "_", "-"))
		enc := b64s(s.Assign)
		name := g.Pick("app-secrets", "api-env", "orders-credentials")
		doc := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"data":     map[string]string{key: enc, "region": b64s("eu-west-1")},
			"metadata": map[string]any{"name": name, "namespace": "prod", "uid": g.UUID(), "resourceVersion": g.Digits(8), "creationTimestamp": "2025-10-02T12:31:44Z"}}
		b, _ := json.MarshalIndent(doc, "", "    ")
		return tool("kubectl get secret "+name+" -n prod -o json", string(b)+"\n"), []string{enc}
	}},
	{"docker-inspect", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "NODE_VERSION=20.18.0", "YARN_VERSION=1.22.22"}
		env = append(env, envFiller[g.N(0, 5)], s.Name+"="+s.Assign, envFiller[g.N(6, 12)])
		id := g.S(hexLow, 64)
		doc := []map[string]any{{"Id": id, "Created": "2025-11-03T08:12:40.118374521Z", "Path": "docker-entrypoint.sh", "Args": []string{"node", "server.js"},
			"State":           map[string]any{"Status": "running", "Running": true, "Pid": g.N(1000, 40000), "ExitCode": 0, "StartedAt": "2025-11-03T08:12:41.01Z"},
			"Image":           "sha256:" + g.S(hexLow, 64),
			"Name":            "/" + g.Pick("orders-api-1", "web", "worker"),
			"Config":          map[string]any{"Hostname": id[:12], "User": "node", "Env": env, "Cmd": []string{"node", "server.js"}, "Image": "acme/orders-api:1.14.2", "WorkingDir": "/app", "ExposedPorts": map[string]any{"8080/tcp": map[string]any{}}},
			"NetworkSettings": map[string]any{"IPAddress": "172.18.0." + fmt.Sprint(g.N(2, 20)), "Gateway": "172.18.0.1"}}}
		b, _ := json.MarshalIndent(doc, "", "    ")
		return tool("docker inspect "+g.Pick("orders-api-1", "web", id[:12]), string(b)+"\n"), nil
	}},
	{"git-diff", hasBlock, func(g *Gen, s Secret) (*loom.Message, []string) {
		text, file, _ := g.block(s)
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		var b strings.Builder
		b.WriteString("diff --git a/" + file + " b/" + file + "\nindex " + g.S(hexLow, 7) + ".." + g.S(hexLow, 7) + " 100644\n--- a/" + file + "\n+++ b/" + file + "\n")
		b.WriteString(fmt.Sprintf("@@ -1,%d +1,%d @@\n", max(1, len(lines)/2), len(lines)))
		for i, l := range lines {
			if i < len(lines)/3 {
				b.WriteString(" " + l + "\n")
			} else {
				b.WriteString("+" + l + "\n")
			}
		}
		return tool(g.Pick("git diff", "git diff HEAD~1", "git show --stat -p HEAD", "git diff --cached"), b.String()), nil
	}},
	{"terraform-state", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		rtype, attr := g.Pick("aws_ssm_parameter", "kubernetes_secret", "github_actions_secret", "aws_secretsmanager_secret_version"), "value"
		switch rtype {
		case "github_actions_secret":
			attr = "plaintext_value"
		case "aws_secretsmanager_secret_version":
			attr = "secret_string"
		}
		attrs := map[string]any{"id": "/prod/" + strings.ToLower(s.Name), "name": "/prod/" + strings.ToLower(s.Name), attr: s.Assign, "type": "SecureString", "tier": "Standard", "tags": map[string]string{"team": "platform"}}
		if rtype == "kubernetes_secret" {
			attrs = map[string]any{"id": "prod/app-secrets", "data": map[string]string{strings.ToLower(s.Name): s.Assign}, "type": "Opaque", "immutable": false}
		}
		doc := map[string]any{"version": 4, "terraform_version": "1.9.8", "serial": g.N(2, 300), "lineage": g.UUID(), "outputs": map[string]any{},
			"resources": []any{map[string]any{"mode": "managed", "type": rtype, "name": "app", "provider": `provider["registry.terraform.io/hashicorp/aws"]`,
				"instances": []any{map[string]any{"schema_version": 0, "attributes": attrs, "sensitive_attributes": []any{[]any{map[string]string{"type": "get_attr", "value": attr}}}}}}}}
		return tool(g.Pick("cat terraform.tfstate", "terraform state pull", "cat envs/prod/terraform.tfstate"), jsonIndent(doc)+"\n"), nil
	}},
	{"terraform-show-json", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		addr := "aws_ssm_parameter." + strings.ToLower(s.Name)
		after := map[string]any{"name": "/prod/" + strings.ToLower(s.Name), "type": "SecureString", "value": s.Assign, "overwrite": nil, "tags": nil}
		doc := map[string]any{"format_version": "1.2", "terraform_version": "1.9.8",
			"planned_values":   map[string]any{"root_module": map[string]any{"resources": []any{map[string]any{"address": addr, "mode": "managed", "type": "aws_ssm_parameter", "name": strings.ToLower(s.Name), "values": after, "sensitive_values": map[string]any{"value": true}}}}},
			"resource_changes": []any{map[string]any{"address": addr, "change": map[string]any{"actions": []string{"create"}, "before": nil, "after": after, "after_unknown": map[string]any{"arn": true, "id": true}, "after_sensitive": map[string]any{"value": true}}}}}
		b, _ := json.Marshal(doc)
		return tool("terraform show -json tfplan", string(b)+"\n"), nil
	}},
	{"yaml-file", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		var b strings.Builder
		var file string
		switch g.r.IntN(4) {
		case 0:
			file = "docker-compose.yml"
			b.WriteString("services:\n  api:\n    image: acme/orders-api:1.14.2\n    ports:\n      - \"8080:8080\"\n    environment:\n      NODE_ENV: production\n")
			b.WriteString(g.yamlPair("      ", s.Name, s.Assign))
			b.WriteString("    depends_on:\n      - db\n  db:\n    image: postgres:16-alpine\n")
		case 1:
			file = ".github/workflows/deploy.yml"
			b.WriteString("name: deploy\non:\n  push:\n    branches: [main]\njobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n")
			b.WriteString(g.yamlPair("      ", s.Name, s.Assign))
			b.WriteString("    steps:\n      - uses: actions/checkout@v4\n      - run: make deploy\n")
		case 2:
			file = "k8s/deployment.yaml"
			b.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: orders-api\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: api\n          image: acme/orders-api:1.14.2\n          env:\n            - name: " + s.Name + "\n")
			b.WriteString(g.yamlPair("              ", "value", s.Assign))
		default:
			file = "charts/orders/values.yaml"
			b.WriteString("replicaCount: 2\nimage:\n  repository: acme/orders-api\n  tag: 1.14.2\nconfig:\n")
			b.WriteString(g.yamlPair("  ", camel(s.Name), s.Assign))
			b.WriteString("resources:\n  limits:\n    memory: 512Mi\n")
		}
		return tool("cat "+file, b.String()), nil
	}},
	{"properties-file", func(s Secret) bool { return hasName(s) && oneLine(s) }, func(g *Gen, s Secret) (*loom.Message, []string) {
		out := "# " + g.Pick("application settings", "Generated for the staging profile") + "\nserver.port=8080\nmanagement.endpoints.web.exposure.include=health,info\n" +
			dotted(s.Name) + g.Pick("=", " = ", ": ") + s.Assign + "\nlogging.level.root=INFO\n"
		return tool("cat "+g.Pick("src/main/resources/application.properties", "config/app.properties", "gradle.properties"), out), nil
	}},
	{"json-config", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		var doc any
		switch g.r.IntN(3) {
		case 0:
			doc = map[string]any{"Logging": map[string]any{"LogLevel": map[string]string{"Default": "Information"}}, "AllowedHosts": "*",
				"Secrets": map[string]string{s.Name: s.Assign}}
		case 1:
			doc = map[string]any{"name": "orders-api", "port": 8080, camel(s.Name): s.Assign, "retries": 3}
		default:
			doc = map[string]any{"env": map[string]string{"NODE_ENV": "production", s.Name: s.Assign}, "regions": []string{"eu-west-1"}}
		}
		return tool("cat "+g.Pick("config.json", "appsettings.Production.json", "config/default.json", ".vscode/settings.json"), jsonIndent(doc)+"\n"), nil
	}},
	{"source-code", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		v := s.Assign
		var code, file string
		ml := strings.Contains(v, "\n")
		switch g.r.IntN(4) {
		case 0:
			file = "app/settings.py"
			lit := jsonStr(v)
			if ml {
				lit = `"""` + v + `"""`
			}
			code = "import os\n\nfrom openai import OpenAI\n\n" + s.Name + " = " + lit + "\n\nclient = OpenAI(api_key=os.getenv(\"OPENAI_API_KEY\"))\nDEBUG = False\n"
		case 1:
			file = "src/config.ts"
			lit := "'" + strings.ReplaceAll(v, "'", `\'`) + "'"
			if ml {
				lit = "`" + v + "`"
			}
			code = "import { z } from 'zod';\n\nexport const " + camel(s.Name) + " = " + lit + ";\n\nexport const config = {\n  port: Number(process.env.PORT ?? 3000),\n};\n"
		case 2:
			file = "internal/config/config.go"
			lit := jsonStr(v)
			if ml {
				lit = "`" + v + "`"
			}
			code = "package config\n\nimport \"os\"\n\nconst " + camel(s.Name) + " = " + lit + "\n\nfunc Port() string {\n\tif p := os.Getenv(\"PORT\"); p != \"\" {\n\t\treturn p\n\t}\n\treturn \"8080\"\n}\n"
		default:
			file = "src/main/java/io/acme/Config.java"
			lit := jsonStr(v)
			if ml {
				lit = "\"\"\"\n" + v + "\"\"\""
			}
			code = "package io.acme;\n\npublic final class Config {\n    private static final String " + s.Name + " = " + lit + ";\n\n    private Config() {}\n}\n"
		}
		switch g.r.IntN(3) {
		case 0:
			return tool("cat -n "+file, numbered(code)), nil
		case 1:
			return Msg(loom.RoleAssistant, TextPart("I found where the value comes from, it's hard-coded in `"+file+"`:\n\n"+fence(langOf(file), code)+"\n\nWe should read it from the environment instead.")), nil
		}
		return tool("cat "+file, code), nil
	}},
	{"shell-command", func(s Secret) bool { return s.Command != "" || (hasName(s) && oneLine(s)) }, func(g *Gen, s Secret) (*loom.Message, []string) {
		c := s.Command
		if c == "" || g.Chance(0.3) && hasName(s) && oneLine(s) {
			v := s.Assign
			if strings.ContainsAny(v, " &;<>|$`'\"!*?#()") {
				v = "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
			}
			c = g.Pick("export "+s.Name+"="+v+" && npm run migrate", s.Name+"="+v+" go run ./cmd/server", "docker run --rm -e "+s.Name+"="+v+" acme/orders-api:1.14.2",
				"gh secret set "+s.Name+" --body "+v, "kubectl create secret generic app --from-literal="+strings.ToLower(s.Name)+"="+v)
		}
		return tool(c, g.Pick("", "ok\n", "Done.\n", "secret/app created\n", "Applying migration 0042_orders_index... OK\n")), nil
	}},
	{"log-lines", func(s Secret) bool { return s.Header != "" || s.Bearer || s.URL != "" || (hasName(s) && oneLine(s)) }, func(g *Gen, s Secret) (*loom.Message, []string) {
		ts := fmt.Sprintf("2025-11-%02dT%02d:%02d:%02d.%03dZ", g.N(1, 28), g.N(0, 23), g.N(0, 59), g.N(0, 59), g.N(0, 999))
		var line string
		switch {
		case s.Header != "" && g.Chance(0.6):
			i := strings.Index(s.Header, ": ")
			line = ts + " DEBUG http.client: send: b'GET /v1/orders HTTP/1.1\\r\\nHost: api.acme.io\\r\\n" + s.Header + "\\r\\nAccept: */*\\r\\n\\r\\n'\n" +
				ts + " DEBUG request headers: {'" + s.Header[:i] + "': '" + s.Header[i+2:] + "', 'User-Agent': 'python-requests/2.32.3'}"
		case s.URL != "":
			line = ts + " INFO  fetch " + s.URL + " -> 200 (" + fmt.Sprint(g.N(20, 900)) + "ms)"
		case s.Bearer && g.Chance(0.5):
			line = ts + " ERROR auth failed for token=" + s.Value + " status=401"
		case hasName(s) && oneLine(s):
			line = ts + " INFO  config loaded: " + `{"env":"production","` + s.Name + `":"` + s.Assign + `","port":8080}`
		default:
			line = ts + " DEBUG Authorization: Bearer " + s.Value
		}
		out := ts[:11] + "09:14:07.311Z INFO  server listening on :8080\n" + ts[:11] + "09:14:07.402Z INFO  connected to postgres (pool=10)\n" + line + "\n" + ts[:11] + "09:15:00.001Z WARN  slow query: 1.2s SELECT * FROM orders WHERE status = $1\n"
		return tool(g.Pick("tail -n 50 logs/app.log", "kubectl logs deploy/orders-api --since=10m", "journalctl -u orders-api -n 40 --no-pager", "docker compose logs --tail 40 api"), out), nil
	}},
	{"url", func(s Secret) bool { return s.URL != "" }, func(g *Gen, s Secret) (*loom.Message, []string) {
		switch g.r.IntN(3) {
		case 0:
			return Msg(loom.RoleUser, TextPart(g.Pick("This link returns 403 since this morning: ", "Why is this so slow? ", "can you fetch ")+s.URL+g.Pick("", " and tell me what's in it", " ?"))), nil
		case 1:
			return tool("curl -sS '"+s.URL+"'", `{"ok":true}`+"\n"), nil
		}
		return Msg(loom.RoleAssistant, TextPart("The request the client makes is:\n\n```\nGET "+s.URL+"\n```\n\nand it fails because the host does not resolve from inside the container.")), nil
	}},
	{"base64-blob", hasBlock, func(g *Gen, s Secret) (*loom.Message, []string) {
		text, file, _ := g.block(s)
		enc := b64s(text)
		if g.Chance(0.5) {
			return tool("base64 -w0 "+file, enc), []string{enc}
		}
		var wrapped strings.Builder
		var lines []string
		for r := enc; len(r) > 0; {
			n := min(76, len(r))
			wrapped.WriteString(r[:n] + "\n")
			lines = append(lines, r[:n])
			r = r[n:]
		}
		return tool("base64 "+file, wrapped.String()), lines
	}},
	{"escaped-json", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		inner, _ := json.Marshal(map[string]string{s.Name: s.Assign, "ENV": "prod"})
		doc := map[string]any{"ARN": "arn:aws:secretsmanager:eu-west-1:" + g.S(digits, 12) + ":secret:prod/orders-" + g.S(alnum, 6),
			"Name": "prod/orders", "VersionId": g.UUID(), "SecretString": string(inner), "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": "2025-09-30T10:12:01.113000+00:00"}
		return tool("aws secretsmanager get-secret-value --secret-id prod/orders", jsonIndent(doc)+"\n"), nil
	}},
	{"notebook", hasName, func(g *Gen, s Secret) (*loom.Message, []string) {
		src := []string{"import os\n", "import pandas as pd\n", "\n"}
		if g.Chance(0.5) {
			src = append(src, "os.environ["+jsonStr(s.Name)+"] = "+pyStr(s.Assign)+"\n")
		} else {
			src = append(src, strings.ToLower(s.Name)+" = "+pyStr(s.Assign)+"\n")
		}
		src = append(src, "df = pd.read_csv(\"orders.csv\")\n", "df.head()")
		nb := map[string]any{"nbformat": 4, "nbformat_minor": 5,
			"metadata": map[string]any{"kernelspec": map[string]string{"display_name": "Python 3", "language": "python", "name": "python3"}, "language_info": map[string]string{"name": "python", "version": "3.11.7"}},
			"cells": []any{
				map[string]any{"cell_type": "markdown", "id": g.S(hexLow, 8), "metadata": map[string]any{}, "source": []string{"# Orders analysis\n", "Pull last week's orders and plot revenue."}},
				map[string]any{"cell_type": "code", "execution_count": g.N(1, 40), "id": g.S(hexLow, 8), "metadata": map[string]any{}, "outputs": []any{}, "source": src}}}
		text := jsonIndent(nb)
		if g.Chance(0.5) {
			return Msg(loom.RoleUser, TextPart("the notebook:"), FilePart("notebooks/orders.ipynb", "application/x-ipynb+json", text)), nil
		}
		return tool("cat notebooks/orders.ipynb", text+"\n"), nil
	}},
	{"json-multiline", func(s Secret) bool { return hasName(s) || strings.Contains(s.Value, "\n") }, func(g *Gen, s Secret) (*loom.Message, []string) {
		var doc any
		if strings.Contains(s.Value, "\n") && s.Name != "" {
			doc = map[string]any{"id": g.S(hexLow, 32), "files": map[string]any{g.Pick("key.pem", "signing.key"): map[string]any{"filename": "key.pem", "type": "application/x-x509-ca-cert", "content": s.Assign + "\n"}}}
		} else if strings.Contains(s.Value, "\n") {
			doc = map[string]any{"id": g.S(hexLow, 32), "files": map[string]any{"key.pem": map[string]any{"filename": "key.pem", "content": s.Value + "\n"}}}
		} else {
			text, file, _ := g.block(s)
			doc = map[string]any{"id": g.S(hexLow, 32), "description": "deploy settings", "public": false, "files": map[string]any{file: map[string]any{"filename": file, "content": text}}}
		}
		return tool("gh api /gists/"+g.S(hexLow, 32), jsonIndent(doc)+"\n"), nil
	}},
	{"assistant-reply", hasBlock, func(g *Gen, s Secret) (*loom.Message, []string) {
		text, file, lang := g.block(s)
		return Msg(loom.RoleAssistant, TextPart(g.Pick("Here is the corrected `"+file+"`:", "Your `"+file+"` should look like this:", "I've updated "+file+" as follows:")+"\n\n"+fence(lang, text)+"\n\n"+g.Pick("Restart the service after saving.", "Then run `make deploy` again.", ""))), nil
	}},
	{"file-part", hasBlock, func(g *Gen, s Secret) (*loom.Message, []string) {
		text, file, _ := g.block(s)
		return Msg(loom.RoleUser, TextPart(g.Pick("see attached", "this file", "@"+file)), FilePart(file, "text/plain", text)), nil
	}},
	{"tool-input-file-write", hasBlock, func(g *Gen, s Secret) (*loom.Message, []string) {
		text, file, _ := g.block(s)
		return tool("cat > "+file+" <<'EOF'\n"+strings.TrimRight(text, "\n")+"\nEOF", ""), nil
	}},
}
