# Usage: MSWEA_GLOBAL_CONFIG_DIR=DIR MSWEA_SILENT_STARTUP=1 PYTHONPATH=SRC:STUBS python3 gen.py WORKDIR OUT
# Runs mini-swe-agent's own DefaultAgent, LocalEnvironment and save() from
# the source at a83fcae8 (2.4.6); the model's replies are given in the form
# LitellmModel.query returns them (message.model_dump() plus extra).
import sys, yaml, time
from pathlib import Path
from minisweagent import global_config_dir
from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import DeterministicToolcallModel

cfg = yaml.safe_load(Path("/tmp/msa/src/minisweagent/config/mini.yaml").read_text())
def reply(i, text, cmd, pt, ct, cached):
    call = {"function": {"arguments": '{"command": "%s"}' % cmd, "name": "bash"}, "id": "call_%d" % i, "type": "function"}
    msg = {"content": text, "role": "assistant", "tool_calls": [call], "function_call": None,
           "provider_specific_fields": {"refusal": None}, "annotations": []}
    resp = {"id": "chatcmpl-%d" % i, "created": 1795790000 + i, "model": "gpt-fake", "object": "chat.completion",
            "system_fingerprint": None,
            "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {k: v for k, v in msg.items()}}],
            "usage": {"completion_tokens": ct, "prompt_tokens": pt, "total_tokens": pt + ct,
                      "completion_tokens_details": None,
                      "prompt_tokens_details": {"audio_tokens": None, "cached_tokens": cached}},
            "service_tier": None}
    msg["extra"] = {"actions": [{"command": cmd, "tool_call_id": call["id"]}], "response": resp, "cost": 0.0, "timestamp": time.time()}
    return msg

model_cfg = dict(cfg["model"]); model_cfg.pop("model_kwargs", None); model_cfg.pop("format_error_template", None)
model = DeterministicToolcallModel(outputs=[
    reply(1, "I will list the files first.", "ls", 1200, 30, 0),
    reply(2, "Now I read notes.txt.", "cat notes.txt", 1500, 25, 1024),
    reply(3, "Done; submitting.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo notes has two lines", 1700, 20, 1280),
], model_name="gpt-fake", **model_cfg)
env = LocalEnvironment(cwd=sys.argv[1], **cfg["environment"])
acfg = {k: v for k, v in cfg["agent"].items() if k not in ("mode", "agent_class", "confirm_exit", "whitelist_actions")}
agent = DefaultAgent(model, env, output_path=Path(sys.argv[2]), **acfg)
print(agent.run("How many lines does notes.txt have?"))
