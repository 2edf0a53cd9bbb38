package secrets_test

import (
	"testing"

	"github.com/loomhq/loom/secrets"
)

// Infrastructure code of the third clean corpus (docs/security.md):
// Pulumi and CDK programs pass secrets from variable to variable, etcd
// names its cluster with a "token", package repositories publish their
// signing keys' fingerprints, and a Secret may hold a whole config
// file. None of these is a secret; the values beside them still are.
func TestInfrastructureCodeIsNotSecret(t *testing.T) {
	d := secrets.Default()
	notFlagged(t, d, []string{
		// A member, a variable or a type given to a secret's name in
		// code (C#, Python, TypeScript), ended by , or ;.
		"        KeyPairPrivateKey = keypair.PrivateKey;\n",
		"        this.MicrosoftAppPassword = msaSecret.Value;\n",
		"                KeyData = sshKey.PublicKeyOpenssh,\n",
		"            DeveloperAppInsightsApiKey = appInsightApiKey.Key,\n",
		"server = sql.Server(\"server\",\n    administrator_login=username,\n    administrator_login_password=pwd,\n    version=\"12.0\",\n)\n",
		"    plaintext_password=sql_user_password,\n",
		"    storage_account_key=storage_account.primary_access_key,\n",
		"const cluster = new aws.redshift.Cluster(\"c\", {\n    masterUsername: clusterDBUsername,\n    masterPassword: clusterDBPassword,\n    nodeType: clusterNodeType,\n});\n",
		"    env: [\n        { name: \"USER_NAME\", value: sqlUserName },\n        { name: \"USER_PASSWORD\", value: sqlUserPassword },\n    ],\n",
		"export interface Inputs {\n    creatorName: pulumi.Input<string>;\n    creatorPassword: pulumi.Input<string>;\n}\n",
		"    PasswordPolicy = new PasswordPolicy {\n        UserPassword = true,\n        UserSrp = true\n    },\n",
		"        auth_flows=cognito.AuthFlow(\n            user_password=True,\n        ),\n",
		"        db_user=be.db.username,\n        db_password=be.db.password,\n",
		"    dbPassword: pulumi.Output<string>;\n    subnetIds: pulumi.Output<string>[];\n",
		"                AdministratorLoginPassword = password.Result,                \n",
		"    service_principal_password=svc_pr_password)\n",
		// etcd's initial cluster token names the cluster.
		"ETCD_INITIAL_CLUSTER_TOKEN=k8s_etcd\n",
		"  etcdctl --initial-cluster-token k8s_etcd --initial-advertise-peer-urls https://10.0.0.1:2380\n",
		"initial-cluster-token: etcd-cluster-1\n",
		// A package repository's signing key, by its fingerprint.
		"docker_ubuntu_repo_repokey: '9DC858229FC7DD38854AE2D88D81803C0EBFCD88'\n",
		"apt_gpg_key: \"9DC8 5822 9FC7 DD38 854A  E2D8 8D81 803C 0EBF CD88\"\n",
		"nodesource_gpg_fingerprint: 6F71F525282841EEDAF851B42F59B5F99B1BE0B4\n",
		// A Secret holding a config file with nothing secret in it.
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: prometheus-config\nstringData:\n  prometheus.yml: |\n    global:\n      evaluation_interval: 1m\n      scrape_interval: 1m\n    rule_files:\n      - /etc/config/recording_rules.yml\n    scrape_configs:\n      - job_name: prometheus\n        static_configs:\n        - targets:\n          - localhost:9090\n",
	})
	redactsAll(t, d, []textSecret{
		// Literals in the same places are found.
		{"        KeyPairPrivateKey = \"Xq7Lm2Rz9Tk4Vb8Nc3Wd\";\n", "Xq7Lm2Rz9Tk4Vb8Nc3Wd"},
		{"const cluster = new aws.redshift.Cluster(\"c\", {\n    masterPassword: \"Xq7Lm2Rz9Tk4\",\n});\n", "Xq7Lm2Rz9Tk4"},
		{"    env: [\n        { name: \"USER_PASSWORD\", value: \"Xq7Lm2Rz9Tk4\" },\n    ],\n", "Xq7Lm2Rz9Tk4"},
		{"DB_PASSWORD=Xq7Lm2Rz9Tk4;\n", "Xq7Lm2Rz9Tk4"},
		{"Server=db;Database=app;User Id=sa;Password=Xq7Lm2Rz9Tk4;\n", "Xq7Lm2Rz9Tk4"},
		{"ETCD_PEER_CLIENT_TOKEN=Xq7Lm2Rz9Tk4Vb8Nc3Wd\n", "Xq7Lm2Rz9Tk4Vb8Nc3Wd"},
		// A key that is no fingerprint, under a repository's name.
		{"docker_repo_key: 'a8F3kQ9zLm2Rx7Vt4Wp6Yb1Hc5'\n", "a8F3kQ9zLm2Rx7Vt4Wp6Yb1Hc5"},
		// Forty hex digits under a key's name that is no repository's.
		{"api_key: 9DC858229FC7DD38854AE2D88D81803C0EBFCD88\n", "9DC858229FC7DD38854AE2D88D81803C0EBFCD88"},
		// A Secret's config file: what it holds under a secret's name
		// is found, and a Secret's credentials file is one whole.
		{"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-config\nstringData:\n  config.yaml: |\n    server:\n      port: 8080\n    database:\n      password: Xq7Lm2Rz9Tk4Vb\n", "Xq7Lm2Rz9Tk4Vb"},
		{"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  credentials.yaml: |\n    client: app\n    blob: Zq8Rm3Lx7Tk2Vb9Nc4Wd1\n", "Zq8Rm3Lx7Tk2Vb9Nc4Wd1"},
	})
}
