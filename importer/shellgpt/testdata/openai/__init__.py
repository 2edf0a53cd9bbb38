# Stand-in for the OpenAI client: chat.completions.create(stream=True)
# returns the next reply of $SGPT_FAKE_REPLIES as the client's stream
# of chunks (choices[0].delta with content or tool_calls, finish_reason).
import json, os
from types import SimpleNamespace as NS


def _chunk(delta, finish=None):
    return NS(choices=[NS(delta=delta, finish_reason=finish, index=0)])


class _Completions:
    def create(self, **kwargs):
        path = os.environ["SGPT_FAKE_REPLIES"]
        replies = json.load(open(path))
        reply = replies.pop(0)
        json.dump(replies, open(path, "w"))
        if "tool" in reply:
            name, args = reply["tool"]
            tc = NS(index=0, id="call_" + name[:5] + str(len(replies)), type="function",
                    function=NS(name=name, arguments=""))
            yield _chunk(NS(content=None, tool_calls=[tc], role="assistant"))
            for part in (args[: len(args) // 2], args[len(args) // 2:]):
                yield _chunk(NS(content=None, tool_calls=[NS(index=0, id=None, type=None, function=NS(name=None, arguments=part))]))
            yield _chunk(NS(content=None, tool_calls=None), "tool_calls")
            return
        for word in reply["text"].split(" "):
            yield _chunk(NS(content=word + " " if word != reply["text"].split(" ")[-1] else word, tool_calls=None))
        yield _chunk(NS(content=None, tool_calls=None), "stop")


class OpenAI:
    def __init__(self, **kwargs):
        self.chat = NS(completions=_Completions())
