# Stand-in for xdg-base-dirs (not installed here): xdg_config_home as
# the XDG Base Directory spec, and the package, give it.
import os
from pathlib import Path


def xdg_config_home():
    v = os.environ.get("XDG_CONFIG_HOME", "")
    return Path(v) if v and os.path.isabs(v) else Path.home() / ".config"
