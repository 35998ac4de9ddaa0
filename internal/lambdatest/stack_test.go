package lambdatest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
)

// runtimeSecrets are the database roles' secrets the runtime functions read.
var runtimeSecrets = []string{"Ref(AppRoleSecret)", "Ref(DoorRoleSecret)"}

// roleSecrets are the three database roles' secrets.
var roleSecrets = []string{"Ref(OwnerRoleSecret)", "Ref(AppRoleSecret)", "Ref(DoorRoleSecret)"}

// TestTemplateEveryResource deploys the template in each mode (both Database modes, at
// their defaults and with every option turned) and checks every resource it would create
// by its type: a type no check knows fails, and every resource of the template is created
// in some mode, so none escapes.
func TestTemplateEveryResource(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for mode, params := range modes {
		s := deployed(t, params)
		for id, r := range s.Resources {
			seen[id] = true
			check, ok := resourceChecks[r.Type]
			if !ok {
				t.Errorf("%s: %s is a %s, which no check of TestTemplateEveryResource knows: add one", mode, id, r.Type)
				continue
			}
			check(t, mode, s, id, r)
		}
	}
	for id := range resourcesOf(rawTemplate(t), "") {
		if !seen[id] {
			t.Errorf("%s is created in no mode of the tests (add a mode to modes)", id)
		}
	}
}

// resourceCheck checks one resource of a deployed stack.
type resourceCheck func(t *testing.T, mode string, s stack, id string, r resource)

var resourceChecks = map[string]resourceCheck{
	"AWS::Serverless::Function": func(t *testing.T, mode string, s stack, id string, r resource) {
		if id == "MigrateFunction" {
			if r.Properties["AutoPublishAlias"] != "live" || r.Properties["AutoPublishAliasAllProperties"] != true || r.Properties["Timeout"] != 900.0 {
				t.Errorf("%s: MigrateFunction must publish every change under the alias live (AutoPublishAliasAllProperties) with a 900 s timeout: %v", mode, r.Properties)
			}
			return
		}
		if fmt.Sprint(r.DependsOn) != "Migration" {
			t.Errorf("%s: %s does not DependsOn Migration: it could serve before the database is migrated, and on a failed migration", mode, id)
		}
	},
	"Custom::Migration": func(t *testing.T, mode string, s stack, id string, r resource) {
		p := r.Properties
		timeout, _ := p["ServiceTimeout"].(float64)
		if p["ServiceToken"] != "Ref(MigrateFunction.Alias)" || p["FunctionVersion"] != "Ref(MigrateFunction.Version)" || timeout <= 900 || timeout > 3600 {
			t.Errorf("%s: %s = %v; want ServiceToken the migrate function's alias, FunctionVersion its version, ServiceTimeout above its 900 s", mode, id, p)
		}
		if s.params["Database"] == "aurora" || mode == "aurora" || mode == "aurora, every option" {
			for k, want := range map[string]string{"DatabaseInstance": "Ref(AuroraInstance)", "Egress": "Ref(PrivateDefaultRoute)"} {
				if p[k] != want {
					t.Errorf("%s: Migration's %s = %v; want %s, so it runs once the database can be reached", mode, k, p[k], want)
				}
			}
		}
	},
	"AWS::IAM::Role": func(t *testing.T, mode string, s stack, id string, r resource) {
		principals := fmt.Sprint(dig(r.Properties, "AssumeRolePolicyDocument"))
		if !strings.Contains(principals, "lambda.amazonaws.com") && !strings.Contains(principals, "rds.amazonaws.com") {
			t.Errorf("%s: %s is assumed by neither Lambda nor RDS: %s", mode, id, principals)
		}
		for action, resources := range s.grants(t, id) {
			for _, res := range resources {
				if strings.Contains(res, "*") && !strings.HasPrefix(action, "sqs:") && !strings.HasSuffix(res, "/*") {
					t.Errorf("%s: %s grants %s on %q: a wildcard", mode, id, action, res)
				}
				if strings.HasPrefix(action, "s3:") && res != "GetAtt(DocumentBucket.Arn)/*" {
					t.Errorf("%s: %s grants %s on %q, not the document bucket's objects", mode, id, action, res)
				}
			}
		}
	},
	"AWS::IAM::ManagedPolicy": func(t *testing.T, mode string, s stack, id string, r resource) {
		// What it grants is checked with each role that attaches it (grants).
		for _, role := range s.Resources {
			if role.Type == "AWS::IAM::Role" && slices.Contains(strs(role.Properties["ManagedPolicyArns"]), "Ref("+id+")") {
				return
			}
		}
		t.Errorf("%s: %s is attached to no role", mode, id)
	},
	"AWS::SecretsManager::Secret": func(t *testing.T, mode string, s stack, id string, r resource) {
		g, generated := r.Properties["GenerateSecretString"].(map[string]any)
		if !generated {
			// What an operator names is an SSM SecureString, never a parameter stored here.
			t.Errorf("%s: %s holds a SecretString instead of generating one", mode, id)
			return
		}
		if r.DeletionPolicy != "Retain" || r.UpdateReplacePolicy != "Retain" {
			t.Errorf("%s: %s is not retained: deleting or replacing the stack would take the key with it", mode, id)
		}
		switch tmpl := str(g, "SecretStringTemplate"); {
		case tmpl != "":
			var v struct{ Username, Dbname string }
			if json.Unmarshal([]byte(tmpl), &v) != nil || !strings.HasPrefix(v.Username, "steward_") || v.Dbname != s.params["DatabaseName"] ||
				g["GenerateStringKey"] != "password" || g["PasswordLength"].(float64) < 32 || g["ExcludePunctuation"] != true {
				t.Errorf("%s: %s is not a role's secret {username, dbname} with a 32+ character password: %v", mode, id, g)
			}
		case g["PasswordLength"] != 64.0 || g["ExcludePunctuation"] != true:
			t.Errorf("%s: %s does not generate 64 characters without punctuation: %v", mode, id, g)
		case id != "TelegramWebhookSecret" && (g["ExcludeUppercase"] != true || g["ExcludeCharacters"] != "ghijklmnopqrstuvwxyz"):
			t.Errorf("%s: %s is a key but not 64 hex digits (32 bytes, what config.DecodeKey and VAPIDKeys take): %v", mode, id, g)
		}
	},
	"AWS::SSM::Parameter": func(t *testing.T, mode string, s stack, id string, r resource) {
		if str(r.Properties, "Type") != "String" || str(r.Properties, "Value") != "GetAtt(ChatFunctionUrl.FunctionUrl)" || str(r.Properties, "Name") != "/steward/public-url" {
			t.Errorf("%s: %s = %v; want the public String parameter /<stack>/public-url holding the web app's URL (no secret in a plain parameter)", mode, id, r.Properties)
		}
	},
	"AWS::Logs::LogGroup": func(t *testing.T, mode string, s stack, id string, r resource) {
		if fmt.Sprint(r.Properties["RetentionInDays"]) != s.params["LogRetentionDays"] {
			t.Errorf("%s: %s keeps its logs %v days, not LogRetentionDays", mode, id, r.Properties["RetentionInDays"])
		}
	},
	"AWS::SQS::Queue": func(t *testing.T, mode string, s stack, id string, r resource) {
		hasProperty(t, mode, id, r, "MessageRetentionPeriod")
	},
	"AWS::CloudWatch::Alarm": func(t *testing.T, mode string, s stack, id string, r resource) {
		hasProperty(t, mode, id, r, "Dimensions")
		hasProperty(t, mode, id, r, "AlarmActions")
	},
	"AWS::SNS::Topic": func(t *testing.T, mode string, s stack, id string, r resource) {
		if id != "AlarmTopic" || s.params["AlarmTopicArn"] != "" {
			t.Errorf("%s: %s: the only topic is the alarms', when no AlarmTopicArn is given", mode, id)
		}
	},
	"AWS::SNS::Subscription": func(t *testing.T, mode string, s stack, id string, r resource) {
		if r.Properties["Protocol"] != "email" || r.Properties["Endpoint"] != s.params["AlarmEmail"] {
			t.Errorf("%s: %s does not subscribe AlarmEmail: %v", mode, id, r.Properties)
		}
	},
	"AWS::S3::Bucket": func(t *testing.T, mode string, s stack, id string, r resource) {
		hasProperty(t, mode, id, r, "BucketEncryption")
		if fmt.Sprint(r.Properties["PublicAccessBlockConfiguration"]) != "map[BlockPublicAcls:true BlockPublicPolicy:true IgnorePublicAcls:true RestrictPublicBuckets:true]" || r.DeletionPolicy != "Retain" {
			t.Errorf("%s: %s is not private and retained", mode, id)
		}
	},
	"AWS::S3::BucketPolicy": func(t *testing.T, mode string, s stack, id string, r resource) {
		if !strings.Contains(fmt.Sprint(r.Properties["PolicyDocument"]), "aws:SecureTransport:false") {
			t.Errorf("%s: %s does not refuse plain HTTP", mode, id)
		}
	},
	"AWS::EC2::VPC": func(t *testing.T, mode string, s stack, id string, r resource) {
		if r.Properties["EnableDnsSupport"] != true || r.Properties["EnableDnsHostnames"] != true {
			t.Errorf("%s: %s without DNS support and host names (interface endpoints' private DNS needs both)", mode, id)
		}
	},
	"AWS::EC2::Subnet": func(t *testing.T, mode string, s stack, id string, r resource) {
		inVpc(t, mode, id, r)
		if r.Properties["MapPublicIpOnLaunch"] == true {
			t.Errorf("%s: %s gives addresses a public IP", mode, id)
		}
	},
	"AWS::EC2::InternetGateway":      func(t *testing.T, mode string, s stack, id string, r resource) {},
	"AWS::EC2::VPCGatewayAttachment": func(t *testing.T, mode string, s stack, id string, r resource) { inVpc(t, mode, id, r) },
	"AWS::EC2::RouteTable":           func(t *testing.T, mode string, s stack, id string, r resource) { inVpc(t, mode, id, r) },
	"AWS::EC2::SubnetRouteTableAssociation": func(t *testing.T, mode string, s stack, id string, r resource) {
		subnet, table := str(r.Properties, "SubnetId"), str(r.Properties, "RouteTableId")
		if strings.Contains(subnet, "Private") != strings.Contains(table, "Private") {
			t.Errorf("%s: %s puts %s in %s", mode, id, subnet, table)
		}
	},
	"AWS::EC2::Route": func(t *testing.T, mode string, s stack, id string, r resource) {
		p := r.Properties
		switch str(p, "RouteTableId") {
		case "Ref(PublicRouteTable)":
			if p["GatewayId"] != "Ref(InternetGateway)" {
				t.Errorf("%s: %s: the public route is not through the internet gateway", mode, id)
			}
		case "Ref(PrivateRouteTable)":
			nat, instance := p["NatGatewayId"] != nil, p["InstanceId"] != nil
			if nat == instance || p["GatewayId"] != nil {
				t.Errorf("%s: %s: the private subnets' way out must be exactly one NAT (gateway or instance), never the internet gateway: %v", mode, id, p)
			}
		}
	},
	"AWS::EC2::EIP": func(t *testing.T, mode string, s stack, id string, r resource) {},
	"AWS::EC2::NatGateway": func(t *testing.T, mode string, s stack, id string, r resource) {
		if str(r.Properties, "SubnetId") != "Ref(PublicSubnet)" {
			t.Errorf("%s: %s is not in the public subnet", mode, id)
		}
	},
	"AWS::EC2::Instance": func(t *testing.T, mode string, s stack, id string, r resource) {
		p := r.Properties
		script, _ := base64.StdEncoding.DecodeString(str(p, "UserData"))
		if str(p, "LaunchTemplate", "LaunchTemplateId") != "Ref(NatInstanceTemplate)" || p["SourceDestCheck"] != false || str(p, "InstanceType") != "t4g.nano" ||
			!strings.Contains(string(script), "MASQUERADE") || !strings.Contains(string(script), "net.ipv4.ip_forward = 1") {
			t.Errorf("%s: %s is not a t4g.nano NAT (its launch template, no source/destination check, forwarding and masquerading): %v", mode, id, p)
		}
	},
	"AWS::EC2::LaunchTemplate": func(t *testing.T, mode string, s stack, id string, r resource) {
		if str(r.Properties, "LaunchTemplateData", "MetadataOptions", "HttpTokens") != "required" {
			t.Errorf("%s: %s does not require IMDSv2", mode, id)
		}
	},
	"AWS::EC2::SecurityGroup": func(t *testing.T, mode string, s stack, id string, r resource) {
		inVpc(t, mode, id, r)
		rules, _ := r.Properties["SecurityGroupIngress"].([]any)
		for _, rule := range rules {
			if cidr := str(rule, "CidrIp"); cidr != "" && cidr != "10.42.0.0/16" || str(rule, "CidrIpv6") != "" {
				t.Errorf("%s: %s lets in %v: only the stack's VPC or its security groups may come in", mode, id, rule)
			}
		}
	},
	"AWS::EC2::SecurityGroupIngress": func(t *testing.T, mode string, s stack, id string, r resource) {
		if str(r.Properties, "SourceSecurityGroupId") == "" || r.Properties["FromPort"] != 5432.0 {
			t.Errorf("%s: %s is not PostgreSQL from a security group: %v", mode, id, r.Properties)
		}
	},
	"AWS::EC2::VPCEndpoint": func(t *testing.T, mode string, s stack, id string, r resource) {
		p := r.Properties
		if str(p, "VpcEndpointType") == "Interface" && (p["PrivateDnsEnabled"] != true || fmt.Sprint(p["SecurityGroupIds"]) != "[Ref(EndpointSecurityGroup)]") {
			t.Errorf("%s: %s: an interface endpoint without private DNS or its security group: %v", mode, id, p)
		}
	},
	"AWS::RDS::DBSubnetGroup": func(t *testing.T, mode string, s stack, id string, r resource) {
		if fmt.Sprint(r.Properties["SubnetIds"]) != "[Ref(PrivateSubnetA) Ref(PrivateSubnetB)]" {
			t.Errorf("%s: %s is not the two private subnets", mode, id)
		}
	},
	"AWS::RDS::DBCluster": func(t *testing.T, mode string, s stack, id string, r resource) {
		p := r.Properties
		if str(p, "Engine") != "aurora-postgresql" || p["StorageEncrypted"] != true || p["ManageMasterUserPassword"] != true ||
			fmt.Sprint(p["DeletionProtection"]) != "true" || fmt.Sprint(p["BackupRetentionPeriod"]) != s.params["AuroraBackupRetentionDays"] ||
			r.DeletionPolicy != "Snapshot" || r.UpdateReplacePolicy != "Snapshot" ||
			fmt.Sprint(dig(p, "ServerlessV2ScalingConfiguration", "MinCapacity")) != s.params["AuroraMinCapacity"] {
			t.Errorf("%s: %s is not an encrypted, deletion-protected, backed-up Aurora PostgreSQL Serverless v2 cluster with its master secret in Secrets Manager, snapshotted on delete: %v (%s, %s)",
				mode, id, p, r.DeletionPolicy, r.UpdateReplacePolicy)
		}
	},
	"AWS::RDS::DBInstance": func(t *testing.T, mode string, s stack, id string, r resource) {
		if str(r.Properties, "DBInstanceClass") != "db.serverless" || r.Properties["PubliclyAccessible"] != false {
			t.Errorf("%s: %s is not a private Serverless v2 instance", mode, id)
		}
	},
	"AWS::RDS::DBProxy": func(t *testing.T, mode string, s stack, id string, r resource) {
		auth, _ := r.Properties["Auth"].([]any)
		var secrets []string
		for _, a := range auth {
			secrets = append(secrets, str(a, "SecretArn"))
			if str(a, "IAMAuth") != "DISABLED" || str(a, "AuthScheme") != "SECRETS" {
				t.Errorf("%s: %s authenticates %v otherwise than with its secret", mode, id, a)
			}
		}
		if r.Properties["RequireTLS"] != true || !slices.Equal(secrets, runtimeSecrets) {
			t.Errorf("%s: %s must require TLS and know steward_app and steward_door only (never steward_owner): %v", mode, id, secrets)
		}
	},
	"AWS::RDS::DBProxyTargetGroup": func(t *testing.T, mode string, s stack, id string, r resource) {
		if fmt.Sprint(r.Properties["DBClusterIdentifiers"]) != "[Ref(AuroraCluster)]" || fmt.Sprint(r.DependsOn) != "AuroraInstance" {
			t.Errorf("%s: %s does not target the cluster once its instance exists", mode, id)
		}
	},
}

func hasProperty(t *testing.T, mode, id string, r resource, name string) {
	t.Helper()
	if r.Properties[name] == nil {
		t.Errorf("%s: %s has no %s", mode, id, name)
	}
}

func inVpc(t *testing.T, mode, id string, r resource) {
	t.Helper()
	if str(r.Properties, "VpcId") != "Ref(Vpc)" {
		t.Errorf("%s: %s is not in the stack's VPC", mode, id)
	}
}

// notifying are the functions that run turns, and so send a suspended turn's notification
// (Web Push, Telegram with its buttons) and read documents; the webhook function only queues
// a run (docs/DEPLOY.md, Roles).
var notifying = map[string]struct{}{"ChatFunction": {}, "ConfirmFunction": {}, "ApiFunction": {}, "WorkerFunction": {}, "SchedulerFunction": {}}

// TestTemplateLeastPrivilege: in every mode, no two functions share a role; each function's
// role may read exactly the secrets its environment names — the runtime never the administrator's URL nor
// steward_owner's secret, the migrate function none of the runtime's keys —; only the
// migrate function writes, and only the roles' secrets; RDS Proxy reads the runtime roles'
// secrets only; KMS is used only through SSM.
func TestTemplateLeastPrivilege(t *testing.T) {
	t.Parallel()
	for mode, params := range modes {
		s := deployed(t, params)
		roleOf := map[string]string{}
		for id, fn := range s.functions() {
			env := s.env(fn)
			if other, shared := roleOf[role(fn)]; shared {
				t.Errorf("%s: %s and %s share the role %s: each function has its own (docs/DEPLOY.md, Roles)", mode, id, other, role(fn))
			}
			roleOf[role(fn)] = id
			g := s.grants(t, role(fn))
			_, notifies := notifying[id]
			if reads := env["STEWARD_TELEGRAM_WEBHOOK_SECRET_SSM"] != "" || env["STEWARD_VAPID_PRIVATE_KEY_SSM"] != "" || env["STEWARD_TELEGRAM_BOT_TOKEN_SSM"] != ""; reads != notifies {
				t.Errorf("%s: %s is told where the Telegram and Web Push secrets are: %v; want %v (only the functions that run turns send notifications)", mode, id, reads, notifies)
			}
			if documents := len(g["s3:GetObject"]) > 0; documents && !notifies {
				t.Errorf("%s: %s may read the document bucket, which it never uses", mode, id)
			}
			if polls := len(g["sqs:ReceiveMessage"]) > 0; polls != (id == "WorkerFunction") {
				t.Errorf("%s: %s may receive from the run queue: %v; only the worker's event source mapping does", mode, id, polls)
			}
			if fails := slices.Contains(g["sqs:SendMessage"], "GetAtt(SchedulerFailureQueue.Arn)"); fails != (id == "SchedulerFunction") {
				t.Errorf("%s: %s may send to SchedulerFailureQueue: %v; only the scheduler's failed ticks go there", mode, id, fails)
			}
			if got, want := s.readable(t, role(fn)), named(env); !slices.Equal(got, want) {
				t.Errorf("%s: %s's role %s may read %v; its environment names %v", mode, id, role(fn), got, want)
			}
			readable := s.readable(t, role(fn))
			if id == "MigrateFunction" {
				for _, v := range readable {
					if !slices.Contains(roleSecrets, v) && v != env["SUPERUSER_DATABASE_URL_SSM"] {
						t.Errorf("%s: the migrate function may read %s, which is not its own (the roles' secrets and the administrator's)", mode, v)
					}
				}
				continue
			}
			for _, v := range readable {
				if v == "Ref(OwnerRoleSecret)" || v == "/steward/database-url" || strings.Contains(v, "MasterUserSecret") {
					t.Errorf("%s: %s may read %s: the runtime never holds steward_owner's or the administrator's credentials", mode, id, v)
				}
			}
		}
		for id, r := range s.Resources {
			if r.Type != "AWS::IAM::Role" {
				continue
			}
			g := s.grants(t, id)
			for action, resources := range g {
				write := strings.Contains(action, "Put") || strings.Contains(action, "Create") || strings.Contains(action, "Update") || strings.Contains(action, "Delete") && !strings.HasPrefix(action, "s3:") && !strings.HasPrefix(action, "sqs:")
				if strings.HasPrefix(action, "secretsmanager:") && action != "secretsmanager:GetSecretValue" &&
					(id != "MigrateRole" || action != "secretsmanager:PutSecretValue" || !slices.Equal(resources, roleSecrets)) {
					t.Errorf("%s: %s may %s on %v: only the migrate function writes, and only the roles' secrets", mode, id, action, resources)
				}
				if strings.HasPrefix(action, "ssm:") && write {
					t.Errorf("%s: %s may %s", mode, id, action)
				}
				policies := fmt.Sprint(dig(r.Properties, "Policies"))
				for _, arn := range strs(r.Properties["ManagedPolicyArns"]) {
					policies += fmt.Sprint(s.Resources[strings.TrimSuffix(strings.TrimPrefix(arn, "Ref("), ")")].Properties)
				}
				if action == "kms:Decrypt" && !strings.Contains(policies, "kms:ViaService:ssm.us-east-1.amazonaws.com") {
					t.Errorf("%s: %s may decrypt with KMS other than through SSM", mode, id)
				}
			}
			if id == "DatabaseProxyRole" && !slices.Equal(g["secretsmanager:GetSecretValue"], runtimeSecrets) {
				t.Errorf("%s: RDS Proxy may read %v, want the runtime roles' secrets only", mode, g["secretsmanager:GetSecretValue"])
			}
		}
	}
}

// sampleValues stand in for what only a deploy knows, so that an environment can go through
// config.Load: a queue's URL, a secret's ARN, an endpoint's host and port.
var sampleValues = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`GetAtt\([A-Za-z]+\.Endpoint\.Port\)`), "5432"},
	{regexp.MustCompile(`GetAtt\(([A-Za-z]+)\.Endpoint(\.Address)?\)`), "$1.cluster-x.us-east-1.rds.amazonaws.com"},
	{regexp.MustCompile(`GetAtt\(([A-Za-z]+)\.MasterUserSecret\.SecretArn\)`), "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-x"},
	{regexp.MustCompile(`Ref\(([A-Za-z]+Queue)\)`), "https://sqs.us-east-1.amazonaws.com/123456789012/$1"},
	{regexp.MustCompile(`Ref\(([A-Za-z]+Secret)\)`), "arn:aws:secretsmanager:us-east-1:123456789012:secret:$1"},
	{regexp.MustCompile(`Ref\(DocumentBucket\)`), "steward-documentbucket-x"},
}

// load is config.Load of a function's environment (symbolic values sampled), with the
// credentials Lambda sets.
func load(env map[string]string) (config.Config, error) {
	vars := map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token"}
	for k, v := range env {
		for _, s := range sampleValues {
			v = s.re.ReplaceAllString(v, s.with)
		}
		vars[k] = v
	}
	return config.Load(func(k string) string { return vars[k] })
}

// TestTemplateEnvironment: in every mode, each function's environment — the Globals'
// merged with its own, as SAM deploys it — loads through config.Load; the runtime's secrets
// come by reference (never in plain text) and the runtime is never given steward_owner's or
// the administrator's URL; the migrate function is given those and none of the runtime's
// secrets; the default models have prices; every *_SSM variable config reads is set by the
// template for the function that needs it.
func TestTemplateEnvironment(t *testing.T) {
	t.Parallel()
	// The configuration's areas are one file each (internal/config): read them all.
	files, err := filepath.Glob(filepath.Join(repoRoot, "internal/config/*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var src []byte
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	ssmVars := regexp.MustCompile(`r\.str\("([A-Z_]+_SSM)"`).FindAllStringSubmatch(string(src), -1)
	if len(ssmVars) < 8 {
		t.Fatalf("found %d *_SSM variables in internal/config; the pattern no longer matches", len(ssmVars))
	}
	migrateOnly := []string{"SUPERUSER_DATABASE_URL_SSM", "DATABASE_URL_SSM"}
	for mode, params := range modes {
		s := deployed(t, params)
		for id, fn := range s.functions() {
			env := s.env(fn)
			cfg, err := load(env)
			if err != nil {
				t.Errorf("%s: %s's environment does not load: %v", mode, id, err)
				continue
			}
			for _, plain := range []string{"APP_DATABASE_URL", "DOOR_DATABASE_URL", "DATABASE_URL", "GEMINI_API_KEY", "OPENAI_API_KEY",
				"STEWARD_SECRET_KEY", "STEWARD_TELEGRAM_WEBHOOK_SECRET", "STEWARD_VAPID_PRIVATE_KEY"} {
				if env[plain] != "" {
					t.Errorf("%s: %s has %s in plain text; a secret comes by reference", mode, id, plain)
				}
			}
			if id == "MigrateFunction" {
				if cfg.SuperuserDatabaseURLParam == "" || env["DATABASE_URL_SSM"] != "Ref(OwnerRoleSecret)" {
					t.Errorf("%s: the migrate function is not told where the administrator's URL and steward_owner's secret are", mode)
				}
				if cfg.GeminiAPIKeyParam != "" || cfg.SecretKeyParam != "" || cfg.TelegramWebhookSecretParam != "" || cfg.VAPIDPrivateKeyParam != "" || cfg.OpenAIAPIKeyParam != "" || cfg.PublicURLParam != "" {
					t.Errorf("%s: the migrate function is told where a runtime secret is: %v", mode, named(env))
				}
				if params["Database"] == "aurora" && !strings.HasPrefix(cfg.SuperuserDatabaseURL, "postgres://AuroraCluster.") {
					t.Errorf("%s: the migrate function's SUPERUSER_DATABASE_URL = %q, want the cluster's endpoint (the master secret fills user and password)", mode, cfg.SuperuserDatabaseURL)
				}
				continue
			}
			if env["APP_DATABASE_URL_SSM"] != "Ref(AppRoleSecret)" || env["DOOR_DATABASE_URL_SSM"] != "Ref(DoorRoleSecret)" {
				t.Errorf("%s: %s does not read the runtime roles' URLs from their secrets", mode, id)
			}
			for _, k := range migrateOnly {
				if env[k] != "" {
					t.Errorf("%s: %s is given %s: the runtime never holds steward_owner's or the administrator's credentials", mode, id, k)
				}
			}
			for _, m := range ssmVars {
				if _, ok := env[m[1]]; !ok && !slices.Contains(migrateOnly, m[1]) {
					t.Errorf("%s: config reads %s, which the template never sets for %s: that secret cannot be given on Lambda", mode, m[1], id)
				}
			}
			_, notifies := notifying[id]
			if cfg.SecretKeyParam == "" || notifies && (cfg.TelegramWebhookSecretParam == "" || cfg.VAPIDPrivateKeyParam == "") || (cfg.PublicURL == "") == (cfg.PublicURLParam == "") {
				t.Errorf("%s: %s lacks a generated key or the public URL: secret key %q, telegram %q, vapid %q, public URL %q / %q",
					mode, id, cfg.SecretKeyParam, cfg.TelegramWebhookSecretParam, cfg.VAPIDPrivateKeyParam, cfg.PublicURL, cfg.PublicURLParam)
			}
			if (params["Database"] == "aurora" && params["RdsProxy"] != "false") != (cfg.DBExecMode == "cache_describe") {
				t.Errorf("%s: %s's STEWARD_DB_EXEC_MODE = %q; want cache_describe exactly behind RDS Proxy", mode, id, cfg.DBExecMode)
			}
			cfg.GeminiAPIKey = "from-the-secret"
			if err := app.CheckPrices(cfg); err != nil {
				t.Errorf("%s: the template's default models would not start: %v", mode, err)
			}
		}
	}
}

// TestTemplateOutputsAndPublicURL: the outputs people use are there, and the functions find
// the web app's URL without a second deploy: the stack writes the Function URL to the SSM
// parameter their STEWARD_PUBLIC_URL_SSM names (and their role may read), unless a PublicUrl
// is given, which they are then told directly.
func TestTemplateOutputsAndPublicURL(t *testing.T) {
	t.Parallel()
	api := "https://Ref(ServerlessHttpApi).execute-api.us-east-1.amazonaws.com"
	for mode, params := range modes {
		s := deployed(t, params)
		for name, want := range map[string]string{"WebAppUrl": "GetAtt(ChatFunctionUrl.FunctionUrl)", "ApiUrl": api,
			"WebhookUrl": api + "/webhooks/", "TelegramWebhookUrl": api + "/telegram/callback", "MigrateFunctionName": "Ref(MigrateFunction)"} {
			if got := fmt.Sprint(s.Outputs[name]["Value"]); got != want {
				t.Errorf("%s: output %s = %q, want %q", mode, name, got, want)
			}
		}
		param, has := s.Resources["PublicUrlParameter"]
		for id, fn := range s.functions() {
			if id == "MigrateFunction" {
				continue
			}
			env := s.env(fn)
			switch {
			case params["PublicUrl"] != "":
				if has || env["STEWARD_PUBLIC_URL"] != params["PublicUrl"] || env["STEWARD_PUBLIC_URL_SSM"] != "" {
					t.Errorf("%s: with PublicUrl given, %s is told it (%q) and reads no parameter (%q)", mode, id, env["STEWARD_PUBLIC_URL"], env["STEWARD_PUBLIC_URL_SSM"])
				}
			case !has || str(param.Properties, "Name") != env["STEWARD_PUBLIC_URL_SSM"] || env["STEWARD_PUBLIC_URL"] != "":
				t.Errorf("%s: %s reads the public URL from %q, the stack writes it to %v", mode, id, env["STEWARD_PUBLIC_URL_SSM"], param.Properties)
			}
		}
	}
	// Every function but chat (whose URL it is) names the parameter with a Ref, so that it is
	// created after the parameter: a tick or a webhook never starts one without it.
	for name, fn := range rawFunctions(t) {
		v := fn.Environment.Variables["STEWARD_PUBLIC_URL_SSM"]
		isRef := v.Tag == "!If" && len(v.Content) == 3 && v.Content[1].Tag == "!Ref" && v.Content[1].Value == "PublicUrlParameter"
		if want := name != "ChatFunction" && name != "MigrateFunction"; isRef != want {
			t.Errorf("%s: STEWARD_PUBLIC_URL_SSM is a Ref to PublicUrlParameter: %v, want %v", name, isRef, want)
		}
	}
}

// TestTemplateMigrateFunctionIsBuilt: the migrate function is one of the template's, built
// by the Makefile like the others (TestTemplateMakefileTargets, TestTemplateCodeBuilds), and
// its alias and version are what the Migration resource names.
func TestTemplateMigrateFunctionIsBuilt(t *testing.T) {
	t.Parallel()
	fns := rawFunctions(t)
	fn, ok := fns["MigrateFunction"]
	if !ok || filepath.Clean(fn.CodeUri) != "functions/migrate" {
		t.Fatalf("no MigrateFunction with CodeUri functions/migrate")
	}
	var doc struct {
		Resources struct {
			Migration struct {
				Properties map[string]yaml.Node `yaml:"Properties"`
			} `yaml:"Migration"`
		} `yaml:"Resources"`
	}
	raw, _ := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Resources.Migration.Properties
	if tok, v := p["ServiceToken"], p["FunctionVersion"]; tok.Tag != "!Ref" || tok.Value != "MigrateFunction.Alias" || v.Tag != "!Ref" || v.Value != "MigrateFunction.Version" {
		t.Errorf("Migration: ServiceToken %s %s, FunctionVersion %s %s; want !Ref MigrateFunction.Alias and !Ref MigrateFunction.Version", tok.Tag, tok.Value, v.Tag, v.Value)
	}
}
