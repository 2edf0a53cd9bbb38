#!/bin/sh
# Usage: gen.sh SRC STUBS DEB WORK — runs the chatgpt command (src/chatgpt.py)
# from its source at SRC against fakemodel.py on 127.0.0.1:18765.
set -e
SRC=$1 STUBS=$2 DEB=$3 WORK=$4
export HOME=$WORK/home XDG_CONFIG_HOME= PYTHONPATH=$STUBS:$DEB OPENAI_API_KEY=sk-fake
export OPENAI_BASE_ENDPOINT=http://127.0.0.1:18765/v1
mkdir -p $HOME/.config/chatgpt-cli
python3 $STUBS/../fakemodel.py 18765 & SERVER=$!
trap 'kill $SERVER' EXIT
sleep 1
echo "What is in notes.txt? It is my to-do list." | python3 $SRC/src/chatgpt.py --non-interactive --model gpt-fake
sleep 1
echo "It has two lines." | python3 $SRC/src/chatgpt.py --non-interactive --model gpt-fake --restore last
