#!/bin/sh
# Usage: gen.sh SRC STUBS WORK DEB — runs ShellGPT's own CLI (python3 -m sgpt)
# from its source at SRC, with the OpenAI client stood in for by STUBS.
set -e
SRC=$1 STUBS=$2 WORK=$3 DEB=$4
export HOME=$WORK/home CHAT_CACHE_PATH=$WORK/chat_cache CACHE_PATH=$WORK/cache
export DEFAULT_TEMPERATURE=0.0 OPENAI_API_KEY=sk-fake PYTHONPATH=$SRC:$STUBS:$DEB SGPT_FAKE_REPLIES=$WORK/replies.json
mkdir -p $HOME/proj && printf 'buy milk\ncall Ann\n' > $HOME/proj/notes.txt && cd $HOME/proj
python3 -m sgpt --install-functions
cat > $SGPT_FAKE_REPLIES <<'R'
[{"tool": ["execute_shell_command", "{\"shell_command\": \"cat notes.txt\"}"]},
 {"text": "notes.txt holds two to-dos: buy milk and call Ann."},
 {"text": "Two lines."}]
R
python3 -m sgpt --no-md --chat notes "What is in notes.txt?"
python3 -m sgpt --no-md --chat notes "How many lines is that?"
