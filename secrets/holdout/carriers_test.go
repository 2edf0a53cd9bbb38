package holdout_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func rawJSON(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

func toolMsg(name string, input any, output any) *loom.Message {
	return &loom.Message{ID: "m", SessionID: "s", Seq: 2, Role: loom.RoleAssistant, CreatedAt: t0, Parts: []loom.Part{
		{ID: "p1", Type: loom.PartText, Text: "Let me look at that."},
		{ID: "p2", Type: loom.PartTool, CallID: "call_1", Name: name, Status: loom.ToolCompleted, Input: rawJSON(input), Output: rawJSON(output)},
	}}
}

func textMsg(role, text string) *loom.Message {
	return &loom.Message{ID: "m", SessionID: "s", Seq: 1, Role: role, CreatedAt: t0, Parts: []loom.Part{{ID: "p1", Type: loom.PartText, Text: text}}}
}

func fileMsg(path, text string) *loom.Message {
	return &loom.Message{ID: "m", SessionID: "s", Seq: 1, Role: loom.RoleUser, CreatedAt: t0, Parts: []loom.Part{
		{ID: "p1", Type: loom.PartText, Text: "see the attached file"},
		{ID: "p2", Type: loom.PartFile, Mime: "text/plain", Filename: path, URL: "file://" + path, Source: &loom.FileSource{Type: "file", Path: path, Text: text}},
	}}
}

func numbered(doc string, arrow bool) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		if arrow {
			fmt.Fprintf(&b, "%6d→%s\n", i+1, l)
		} else {
			fmt.Fprintf(&b, "%6d\t%s\n", i+1, l)
		}
	}
	return b.String()
}

func fence(path string) string {
	switch {
	case strings.HasSuffix(path, ".yml"), strings.HasSuffix(path, ".yaml"):
		return "yaml"
	case strings.HasSuffix(path, ".json"):
		return "json"
	case strings.HasSuffix(path, ".py"):
		return "python"
	case strings.HasPrefix(path, ".env"):
		return "bash"
	}
	return ""
}

// docCarriers wrap a whole document; all kinds can use them.
var docCarriers = []string{"prompt", "cat-output", "read-tool", "structured-stdout", "write-input", "heredoc-input", "git-diff", "grep-output", "assistant-fence", "file-part", "escaped-json", "tool-error", "reasoning"}

// tokCarriers need a name and a value.
var tokCarriers = []string{"env-output", "echo-output", "docker-inspect", "kubectl-secret-yaml", "kubectl-secret-json", "kubectl-describe", "curl-verbose", "terraform-show", "helm-values", "aws-secretsmanager", "aws-ssm", "log-line", "notebook", "command-input", "base64-blob"}

func docCarrier(r *rng, c, doc, path string) *loom.Message {
	if path == "" {
		path = r.pick("notes.txt", "config.txt", "/tmp/out.log", "README.md")
	}
	switch c {
	case "prompt":
		return textMsg(loom.RoleUser, r.pick("I'm getting a connection error with this config, what's wrong?\n\n```\n", "here's my "+path+":\n", "Can you convert this to the new format?\n\n")+doc+r.pick("```\n", "", "\nthanks!"))
	case "cat-output":
		return toolMsg("bash", map[string]any{"command": "cat " + path, "description": "Show the file"}, doc)
	case "read-tool":
		return toolMsg("read", map[string]any{"filePath": "/home/dev/project/" + strings.TrimPrefix(path, "~/")}, "<file>\n"+numbered(doc, r.chance(0.5))+"</file>")
	case "structured-stdout":
		return toolMsg("shell", map[string]any{"cmd": []string{"bash", "-lc", "cat " + path}}, map[string]any{"stdout": doc, "stderr": "", "exit_code": 0, "duration_ms": 12})
	case "write-input":
		return toolMsg("write", map[string]any{"file_path": "/home/dev/project/" + strings.TrimPrefix(path, "~/"), "content": doc}, "File written successfully.")
	case "heredoc-input":
		return toolMsg("bash", map[string]any{"command": "cat > " + path + " <<'EOF'\n" + doc + "EOF"}, "")
	case "git-diff":
		var b strings.Builder
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 3f2a1b0..8c9d4e2 100644\n--- a/%s\n+++ b/%s\n@@ -1,3 +1,%d @@\n", path, path, path, path, strings.Count(doc, "\n")+1)
		for _, l := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
			b.WriteString("+" + l + "\n")
		}
		return toolMsg("bash", map[string]any{"command": r.pick("git diff", "git show HEAD", "git log -p -1")}, b.String())
	case "grep-output":
		var b strings.Builder
		for i, l := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
			fmt.Fprintf(&b, "%s:%d:%s\n", path, i+1, l)
		}
		return toolMsg("grep", map[string]any{"pattern": r.pick("key|token|secret", "password", "."), "path": "."}, b.String())
	case "assistant-fence":
		return textMsg(loom.RoleAssistant, "Here's the corrected `"+path+"`:\n\n```"+fence(path)+"\n"+doc+"```\n\nThis should fix the issue.")
	case "file-part":
		return fileMsg(path, doc)
	case "escaped-json":
		inner := map[string]any{"path": path, "content": doc, "size": len(doc)}
		b, _ := json.Marshal(inner)
		return toolMsg("mcp__fs__read", map[string]any{"path": path}, map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}}})
	case "tool-error":
		m := toolMsg("bash", map[string]any{"command": "./deploy.sh"}, nil)
		m.Parts[1].Output = nil
		m.Parts[1].Status = loom.ToolError
		m.Parts[1].Error = "exit status 1\nerror: invalid configuration in " + path + ":\n" + doc
		return m
	case "reasoning":
		return &loom.Message{ID: "m", SessionID: "s", Seq: 3, Role: loom.RoleAssistant, CreatedAt: t0, Parts: []loom.Part{
			{ID: "p1", Type: loom.PartReasoning, Text: "The user's file " + path + " contains:\n" + doc + "\nI should check the value format."},
			{ID: "p2", Type: loom.PartText, Text: "The configuration looks fine."}}}
	}
	panic("carrier " + c)
}

func tokCarrier(r *rng, c, name, v string, kp *keyPool) (*loom.Message, []string) {
	N := upperSnake(name)
	switch c {
	case "env-output":
		env := []string{"SHELL=/bin/bash", "HOME=/home/dev", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin", "HOSTNAME=" + r.hex(12), "TERM=xterm-256color", N + "=" + v, "PWD=/home/dev/project", "SHLVL=1", "_=/usr/bin/env"}
		r.Shuffle(len(env), func(i, j int) { env[i], env[j] = env[j], env[i] })
		return toolMsg("bash", map[string]any{"command": r.pick("env", "printenv", "env | sort", "docker exec api env")}, strings.Join(env, "\n")+"\n"), nil
	case "echo-output":
		return toolMsg("bash", map[string]any{"command": r.pick("echo $"+N, "printenv "+N, "echo \"$"+N+"\"")}, v+"\n"), nil
	case "docker-inspect":
		d := []any{map[string]any{"Id": r.hex(64), "Created": "2025-05-30T08:11:02.123Z", "Name": "/api", "Config": map[string]any{
			"Hostname": r.hex(12), "Image": "acme/api:1.4.2", "Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", N + "=" + v, "NODE_VERSION=20.11.1", "YARN_VERSION=1.22.19"},
			"Cmd": []string{"node", "server.js"}, "Labels": map[string]string{"com.docker.compose.project": "acme"}}}}
		b, _ := json.MarshalIndent(d, "", "    ")
		return toolMsg("bash", map[string]any{"command": "docker inspect api"}, string(b)), nil
	case "kubectl-secret-yaml":
		k := r.pick(snake(name), N, strings.ReplaceAll(snake(name), "_", "-"))
		out := "apiVersion: v1\ndata:\n  " + k + ": " + b64(v) + "\n  region: " + b64("us-east-1") + "\nkind: Secret\nmetadata:\n  creationTimestamp: \"2025-05-01T10:00:00Z\"\n  name: api-secrets\n  namespace: prod\n  resourceVersion: \"48213\"\n  uid: " + r.uuid() + "\ntype: Opaque\n"
		return toolMsg("bash", map[string]any{"command": "kubectl get secret api-secrets -n prod -o yaml"}, out), []string{b64(v)}
	case "kubectl-secret-json":
		k := r.pick(snake(name), N)
		s := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": map[string]any{"name": "api-secrets", "namespace": "prod"}, "data": map[string]string{k: b64(v), "region": b64("us-east-1")}}
		b, _ := json.MarshalIndent(s, "", "    ")
		return toolMsg("bash", map[string]any{"command": "kubectl get secret api-secrets -o json"}, string(b)), []string{b64(v)}
	case "kubectl-describe":
		out := "Name:             api-7d9f8b6c5-x2x9q\nNamespace:        prod\nContainers:\n  api:\n    Image:          acme/api:1.4.2\n    Port:           8080/TCP\n    Environment:\n      NODE_ENV:        production\n      " + N + ":  " + v + "\n      DB_HOST:         postgres.prod.svc\n    Mounts:\n      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-abcde (ro)\n"
		return toolMsg("bash", map[string]any{"command": "kubectl describe pod api-7d9f8b6c5-x2x9q"}, out), nil
	case "curl-verbose":
		h := r.pick("authorization: Bearer ", "Authorization: Bearer ", "x-api-key: ", "Authorization: token ", "PRIVATE-TOKEN: ", "DD-API-KEY: ")
		out := "*   Trying 104.18.7.192:443...\n* Connected to api.example.com (104.18.7.192) port 443\n> POST /v1/chat/completions HTTP/2\r\n> Host: api.example.com\r\n> user-agent: curl/8.5.0\r\n> accept: */*\r\n> " + h + v + "\r\n> content-type: application/json\r\n>\r\n< HTTP/2 401\r\n< content-type: application/json\r\n< date: Sun, 01 Jun 2025 12:00:00 GMT\r\n<\r\n{\"error\":{\"message\":\"Incorrect API key provided\"}}"
		return toolMsg("bash", map[string]any{"command": "curl -v -X POST https://api.example.com/v1/chat/completions -H \"" + strings.TrimSuffix(h, " ") + " $" + N + "\" -d @req.json"}, out), nil
	case "terraform-show":
		var out string
		if r.chance(0.5) {
			out = "# acme_integration.main:\nresource \"acme_integration\" \"main\" {\n    id          = \"int-" + r.hex(8) + "\"\n    name        = \"billing\"\n    " + snake(name) + " = \"" + v + "\"\n    enabled     = true\n}\n"
		} else {
			o := map[string]any{snake(name): map[string]any{"sensitive": false, "type": "string", "value": v}, "endpoint": map[string]any{"sensitive": false, "type": "string", "value": "https://api.acme.io"}}
			b, _ := json.MarshalIndent(o, "", "  ")
			out = string(b)
		}
		return toolMsg("bash", map[string]any{"command": r.pick("terraform show", "terraform output -json", "terraform state show acme_integration.main")}, out), nil
	case "helm-values":
		out := "USER-SUPPLIED VALUES:\nenv:\n  " + N + ": " + v + "\n  LOG_LEVEL: info\nimage:\n  repository: acme/api\n  tag: 1.4.2\nreplicaCount: 2\n"
		return toolMsg("bash", map[string]any{"command": "helm get values api -n prod"}, out), nil
	case "aws-secretsmanager":
		inner, _ := json.Marshal(map[string]string{N: v, "region": "us-east-1"})
		o := map[string]any{"ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/api-AbCdEf", "Name": "prod/api", "VersionId": r.uuid(), "SecretString": string(inner), "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": "2025-05-01T10:00:00.000000+00:00"}
		b, _ := json.MarshalIndent(o, "", "    ")
		return toolMsg("bash", map[string]any{"command": "aws secretsmanager get-secret-value --secret-id prod/api --output json"}, string(b)), nil
	case "aws-ssm":
		o := map[string]any{"Parameter": map[string]any{"Name": "/prod/api/" + N, "Type": "SecureString", "Value": v, "Version": 3, "ARN": "arn:aws:ssm:us-east-1:123456789012:parameter/prod/api/" + N, "DataType": "text"}}
		b, _ := json.MarshalIndent(o, "", "    ")
		return toolMsg("bash", map[string]any{"command": "aws ssm get-parameter --name /prod/api/" + N + " --with-decryption"}, string(b)), nil
	case "log-line":
		var l string
		switch r.IntN(4) {
		case 0:
			l = "2025-06-01T12:00:01.482Z DEBUG [config] loaded " + N + "=" + v + " from environment"
		case 1:
			l = `time="2025-06-01T12:00:01Z" level=debug msg="sending request" url=https://api.example.com/v1 ` + snake(name) + "=" + v
		case 2:
			l = `{"level":"debug","ts":1748779201.48,"msg":"outgoing request","headers":{"Authorization":"Bearer ` + v + `","User-Agent":"acme/1.4"}}`
		default:
			l = "[2025-06-01 12:00:01,482] WARNING client: retrying with " + snake(name) + "='" + v + "' (attempt 2/5)"
		}
		out := "2025-06-01T12:00:00.001Z INFO  starting api v1.4.2\n" + l + "\n2025-06-01T12:00:01.900Z INFO  listening on :8080\n"
		return toolMsg("bash", map[string]any{"command": r.pick("docker logs api --tail 50", "kubectl logs deploy/api", "tail -n 100 /var/log/app.log")}, out), nil
	case "notebook":
		nb := map[string]any{"cells": []any{
			map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": []string{"# Setup\n"}},
			map[string]any{"cell_type": "code", "execution_count": 1, "metadata": map[string]any{}, "outputs": []any{}, "source": []string{"import os\n", "os.environ[\"" + N + "\"] = \"" + v + "\"\n", "client = Client()"}},
			map[string]any{"cell_type": "code", "execution_count": 2, "metadata": map[string]any{}, "outputs": []any{map[string]any{"name": "stdout", "output_type": "stream", "text": []string{"ok\n"}}}, "source": []string{"print(client.ping())"}},
		}, "metadata": map[string]any{"kernelspec": map[string]any{"display_name": "Python 3", "language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
		b, _ := json.MarshalIndent(nb, "", " ")
		if r.chance(0.5) {
			return fileMsg("analysis.ipynb", string(b)), nil
		}
		return toolMsg("bash", map[string]any{"command": "cat analysis.ipynb"}, string(b)), nil
	case "command-input":
		var cmd string
		switch r.IntN(5) {
		case 0:
			cmd = "export " + N + "=" + v + " && npm run deploy"
		case 1:
			cmd = "curl -sS https://api.example.com/v1/me -H \"Authorization: Bearer " + v + "\""
		case 2:
			cmd = N + "=" + v + " python scripts/sync.py --dry-run"
		case 3:
			cmd = "gh secret set " + N + " --body \"" + v + "\""
		default:
			cmd = "echo '" + v + "' | docker login ghcr.io -u ci --password-stdin"
		}
		return toolMsg("bash", map[string]any{"command": cmd, "description": "Run with credentials"}, "done\n"), nil
	case "base64-blob":
		doc := N + "=" + v + "\nREGION=us-east-1\n"
		e := b64(doc)
		return toolMsg("bash", map[string]any{"command": "cat .env | base64 -w0"}, e+"\n"), nil
	}
	panic("carrier " + c)
}
