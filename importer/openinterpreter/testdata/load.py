# Imports interpreter.core.core without the package's __init__, which
# starts the server parts (starlette, fastapi) and builds an instance,
# and stands in for the modules IMPORTED_ONLY names: imported by
# modules of the computer (browser, vision, ...) or the terminal's
# setup, never called in this run.
import sys, types, os, importlib.abc, importlib.machinery
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interpreter")
pkg = types.ModuleType("interpreter"); pkg.__path__ = [root]; sys.modules["interpreter"] = pkg

IMPORTED_ONLY = os.environ.get("OI_IMPORTED_ONLY", "").split()

class _Any(types.ModuleType):
    __path__ = []
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": lambda self, *a, **k: None, "__call__": lambda self, *a, **k: None})

class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in IMPORTED_ONLY:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        return _Any(spec.name)
    def exec_module(self, module):
        pass

sys.meta_path.insert(0, _Finder())
