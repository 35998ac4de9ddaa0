package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestEveryAreaRefusesABadValue: each area of Config (an embedded struct, or Trading,
// Retention and AWS) checks its own variables in Load, and its error names the variable. A
// new area is a new field of Config, and this test fails until it has a case here.
func TestEveryAreaRefusesABadValue(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"Database":    {map[string]string{"STEWARD_DB_MAX_CONNS": "0"}, "STEWARD_DB_MAX_CONNS"},
		"Server":      {map[string]string{"STEWARD_SHUTDOWN_GRACE": "soon"}, "STEWARD_SHUTDOWN_GRACE"},
		"LLM":         {map[string]string{"STEWARD_MODEL_TIMEOUT": "0s"}, "STEWARD_MODEL_TIMEOUT"},
		"Voice":       {map[string]string{"STEWARD_VOICE_MAX_SECONDS": "1"}, "STEWARD_VOICE_MAX_SECONDS"},
		"Memory":      {map[string]string{"STEWARD_CONTEXT_TOKENS": "many"}, "STEWARD_CONTEXT_TOKENS"},
		"Turns":       {map[string]string{"STEWARD_DAILY_COST_CAP_USD": "lots"}, "STEWARD_DAILY_COST_CAP_USD"},
		"Egress":      {map[string]string{"STEWARD_MCP_TIMEOUT": "-5s"}, "STEWARD_MCP_TIMEOUT"},
		"Documents":   {map[string]string{"STEWARD_DOCUMENT_ENDPOINT": "http://minio:9000"}, "STEWARD_DOCUMENT_ENDPOINT"},
		"Sandbox":     {map[string]string{"STEWARD_SHELL_MEMORY": "8"}, "STEWARD_SHELL_MEMORY"},
		"Web":         {map[string]string{"STEWARD_LINK_TTL": "forever"}, "STEWARD_LINK_TTL"},
		"Keys":        {map[string]string{"STEWARD_SECRET_KEY": "c2hvcnQ="}, "STEWARD_SECRET_KEY"},
		"Telegram":    {map[string]string{"STEWARD_TELEGRAM_API_URL": "api.telegram.org"}, "STEWARD_TELEGRAM_API_URL"},
		"Push":        {map[string]string{"STEWARD_VAPID_PUBLIC_KEY": "BPub"}, "STEWARD_VAPID_PUBLIC_KEY"},
		"Trading":     {map[string]string{"STEWARD_TRADING": "live"}, "STEWARD_TRADING"},
		"Retention":   {map[string]string{"STEWARD_RETAIN_AUDIT": "7d"}, "STEWARD_RETAIN_AUDIT"},
		"AWS":         {map[string]string{"AWS_ENDPOINT_URL_SSM": "localhost:4566"}, "AWS_ENDPOINT_URL_SSM"},
		"OAuth":       {map[string]string{"STEWARD_OAUTH_GOOGLE_CLIENT_ID": "id-without-secret"}, "STEWARD_OAUTH_GOOGLE_CLIENT_SECRET"},
		"Automations": {map[string]string{"STEWARD_AUTOMATION_MIN_INTERVAL": "30s"}, "STEWARD_AUTOMATION_MIN_INTERVAL"},
	}
	areas := reflect.TypeFor[Config]()
	for i := range areas.NumField() {
		f := areas.Field(i)
		if f.Type.Kind() != reflect.Struct {
			continue
		}
		if _, ok := cases[f.Name]; !ok {
			t.Errorf("Config's area %s has no case here: add a bad value of one of its variables", f.Name)
		}
	}
	for area, tc := range cases {
		if _, ok := areas.FieldByName(area); !ok {
			t.Errorf("%s is not an area of Config", area)
			continue
		}
		_, err := Load(env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v = %v; want an error naming %s", area, tc.env, err, tc.want)
		}
	}
}
