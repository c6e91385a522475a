C=/tmp/bridge-research/codex169/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
