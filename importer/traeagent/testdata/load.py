# Loads Trae Agent's trajectory recorder and the types it records from its
# source (trae_agent at e839e559), without the package's __init__ files,
# which import every tool and client. Python 3.11 here: typing.override
# (3.12) is stood in for by the identity.
import importlib.util, sys, types, typing
typing.override = lambda f: f
def pkg(name):
    m = types.ModuleType(name); m.__path__ = []; sys.modules[name] = m
for p in ["trae_agent", "trae_agent.tools", "trae_agent.utils", "trae_agent.utils.llm_clients"]:
    pkg(p)
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); sys.modules[name] = m; spec.loader.exec_module(m); return m
base = load("trae_agent.tools.base", "trae_agent/tools/base.py")
basics = load("trae_agent.utils.llm_clients.llm_basics", "trae_agent/utils/llm_clients/llm_basics.py")
rec = load("trae_agent.utils.trajectory_recorder", "trae_agent/utils/trajectory_recorder.py")
