CD=$(mktemp -d)
export IS_SANDBOX=1 HOME=$CD CLAUDE_CONFIG_DIR=$CD/.claude ANTHROPIC_BASE_URL=http://127.0.0.1:41310 ANTHROPIC_API_KEY=sk-ant-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY=127.0.0.1,localhost
CLAUDE_ACP="node /tmp/bridge-research/claude-acp/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
