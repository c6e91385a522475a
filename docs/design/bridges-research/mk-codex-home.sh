# usage: mk-codex-home.sh PORT APPROVAL SANDBOX -> prints dir
H=$(mktemp -d /tmp/codex-acp-home-XXXX)
cat > $H/config.toml <<TOML
model = "mock-model"
model_provider = "mock"
approval_policy = "$2"
sandbox_mode = "$3"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$1/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
shell_snapshot = false

[analytics]
enabled = false
TOML
echo $H
