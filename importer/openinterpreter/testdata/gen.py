# Usage: HOME=DIR OI_IMPORTED_ONLY="..." PYTHONPATH=SRC:STUBS[:DEB] python3 gen.py WORKDIR
# Runs Open Interpreter's own OpenInterpreter.chat (core/core.py) from its
# source at dcfcffa9 (0.4.3): respond.py's loop, the tool-calling LLM
# path, the computer's terminal running shell code for real, and the
# conversation saved in its default place below $HOME/.config.
# Modules imported but not called in this run (OI_IMPORTED_ONLY): inquirer
# psutil wget tiktoken html2text selenium shortuuid webdriver_manager PIL
# matplotlib html2image jupyter_client openai
import os, sys
import load  # the package without its __init__
import litellm
from interpreter.core.core import OpenInterpreter

work = sys.argv[1]
os.chdir(work)
litellm.REPLIES[:] = [
    {"code": "wc -l notes.txt"},
    {"text": "notes.txt has 2 lines."},
    {"text": "The first line is: buy milk."},
]
oi = OpenInterpreter(auto_run=True, disable_telemetry=True)
oi.llm.model = "gpt-fake"
oi.llm.context_window, oi.llm.max_tokens = 100000, 1000
oi.llm.supports_functions, oi.llm.supports_vision = True, False
oi.chat("How many lines does notes.txt have?", display=False)
oi.chat("And what is the first one?", display=False)
