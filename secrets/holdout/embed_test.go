package holdout_test

import (
	"strings"
	"unicode"
)

func snake(name string) string {
	// camelCase or UPPER_SNAKE -> lower_snake
	var b strings.Builder
	for i, c := range name {
		if unicode.IsUpper(c) && i > 0 && !unicode.IsUpper(rune(name[i-1])) && name[i-1] != '_' {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

func camel(name string) string {
	parts := strings.Split(snake(name), "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func upperSnake(name string) string { return strings.ToUpper(snake(name)) }

// envLine writes NAME=value in one of the ways .env files and shells do.
func envLine(r *rng, name, v string) string {
	name = upperSnake(name)
	switch r.IntN(8) {
	case 0:
		return name + `="` + v + `"`
	case 1:
		return "export " + name + "=" + v
	case 2:
		return name + "='" + v + "'"
	case 3:
		return name + " = " + v
	case 4:
		return name + "=" + v + "  # " + r.pick("prod", "do not commit", "rotated 2024-05", "TODO move to vault")
	case 5:
		return "export " + name + `="` + v + `"`
	}
	return name + "=" + v
}

// embed puts a token into a small file of some style, with neighbours.
func embed(r *rng, name, v string) (doc, path, style string) {
	lname := snake(name)
	styles := []string{"env", "env", "yaml", "json", "toml", "python", "js", "go", "java", "ruby", "prose", "dockerfile", "gha", "ini", "hcl", "xml", "header", "cli", "php", "csharp", "shell"}
	style = styles[r.IntN(len(styles))]
	nl := "\n"
	if r.chance(0.1) {
		nl = "\r\n"
	}
	L := func(lines ...string) string { return strings.Join(lines, nl) + nl }
	switch style {
	case "env":
		return L("# service config", "NODE_ENV=production", "PORT=3000", envLine(r, name, v), "LOG_LEVEL=debug"), r.pick(".env", ".env.local", ".env.production", "config/.env"), style
	case "yaml":
		k := r.pick(lname, camel(name), upperSnake(name))
		return L("app:", "  name: billing", "  region: eu-west-1", "  "+r.pick("credentials", "secrets", "auth", "integrations")+":", "    "+k+": "+q(r, v), "    timeout: 30s"), r.pick("config.yaml", "config/prod.yml", "secrets.yml"), style
	case "json":
		k := r.pick(camel(name), lname, upperSnake(name))
		return L("{", `  "service": "billing",`, `  "`+k+`": "`+v+`",`, `  "retries": 3`, "}"), r.pick("config.json", "appsettings.json", "credentials.json", ".vscode/settings.json"), style
	case "toml":
		return L("[service]", `name = "billing"`, lname+r.pick(" = ", "=")+`"`+v+`"`, "timeout = 30"), r.pick("config.toml", "settings.toml", ".streamlit/secrets.toml"), style
	case "python":
		switch r.IntN(3) {
		case 0:
			return L("import os", "", upperSnake(name)+" = \""+v+"\"", "", "def client():", "    return Client(api_key="+upperSnake(name)+")"), "settings.py", style
		case 1:
			return L("import os", `os.environ["`+upperSnake(name)+`"] = "`+v+`"`, "from app import main"), "run.py", style
		}
		return L("client = Client(", `    `+lname+`="`+v+`",`, `    timeout=30,`, ")"), "client.py", style
	case "js":
		if r.chance(0.5) {
			return L("const config = {", "  "+camel(name)+": process.env."+upperSnake(name)+" || '"+v+"',", "  region: 'us-east-1',", "};", "module.exports = config;"), "config.js", style
		}
		return L("import { Client } from './client';", "", "const "+camel(name)+" = `"+v+"`;", "export const client = new Client({ "+camel(name)+" });"), "src/client.ts", style
	case "go":
		return L("package main", "", "const "+camel(name)+" = \""+v+"\"", "", "func main() {", "\tc := NewClient("+camel(name)+")", "\t_ = c", "}"), "main.go", style
	case "java":
		return L("public class Config {", "    private static final String "+upperSnake(name)+" = \""+v+"\";", "    public static final int TIMEOUT = 30;", "}"), "Config.java", style
	case "ruby":
		if r.chance(0.5) {
			return L("Rails.application.configure do", "  config."+lname+" = '"+v+"'", "end"), "config/initializers/client.rb", style
		}
		return L("ENV['"+upperSnake(name)+"'] ||= \""+v+"\"", "require_relative 'app'"), "boot.rb", style
	case "prose":
		return r.pick("here's the key I'm using: ", "my "+lname+" is ", "I set "+upperSnake(name)+" to ", "This token doesn't work anymore? ") + v + r.pick("", " — can you check why it returns 401?", ". Why does the request fail?", "\nthanks"), "", style
	case "dockerfile":
		return L("FROM node:20-alpine", "WORKDIR /app", r.pick("ENV ", "ARG ")+upperSnake(name)+"="+v, "COPY . .", "RUN npm ci", `CMD ["node", "server.js"]`), "Dockerfile", style
	case "gha":
		return L("jobs:", "  deploy:", "    runs-on: ubuntu-latest", "    env:", "      "+upperSnake(name)+": "+v, "    steps:", "      - uses: actions/checkout@v4"), ".github/workflows/deploy.yml", style
	case "ini":
		return L("[default]", lname+" = "+v, "region = us-east-1"), r.pick("config.ini", "setup.cfg", ".config/tool/credentials"), style
	case "hcl":
		return L(`provider "acme" {`, "  "+lname+" = \""+v+"\"", `  region = "us-east-1"`, "}"), "main.tf", style
	case "xml":
		return L(`<?xml version="1.0" encoding="utf-8"?>`, "<configuration>", "  <appSettings>", `    <add key="`+camel(name)+`" value="`+v+`" />`, "  </appSettings>", "</configuration>"), "web.config", style
	case "header":
		return L("POST /v1/messages HTTP/1.1", "Host: api.example.com", r.pick("Authorization: Bearer ", "authorization: Bearer ", "X-API-Key: ", "Authorization: token ")+v, "Content-Type: application/json"), "", style
	case "cli":
		return r.pick("acme-cli deploy --token ", "./bin/sync --api-key=", "npx some-tool --auth ", "python upload.py --"+strings.ReplaceAll(lname, "_", "-")+" ") + v + " --verbose\n", "", style
	case "php":
		return L("<?php", "$config['"+lname+"'] = '"+v+"';", "return $config;"), "config.php", style
	case "csharp":
		return L("var client = new ApiClient(new ApiClientOptions", "{", "    "+camel(name)+" = \""+v+"\",", "    Timeout = TimeSpan.FromSeconds(30)", "});"), "Program.cs", style
	}
	return L("#!/usr/bin/env bash", "set -euo pipefail", "export "+upperSnake(name)+"=\""+v+"\"", "./deploy.sh \"$@\""), "deploy.sh", "shell"
}
