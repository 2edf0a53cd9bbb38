# Stand-in for litellm: completion(stream=True) gives the next reply of
# REPLIES as litellm's stream of chunks (chunk["choices"][0]["delta"],
# whose tool_calls have .function.name and .function.arguments).
REPLIES = []
suppress_debug_info = True
drop_params = True


class _Obj(dict):
    def __getattr__(self, k):
        return self.get(k)


def _chunk(delta, finish=None):
    return _Obj(choices=[_Obj(delta=_Obj(delta), finish_reason=finish, index=0)])


def completion(**params):
    reply = REPLIES.pop(0)
    if "code" in reply:
        import json
        args = json.dumps({"language": "shell", "code": reply["code"]})
        yield _chunk({"role": "assistant", "content": None, "tool_calls": [_Obj(id="call_1", index=0, function=_Obj(name="execute", arguments=""))]})
        for part in (args[: len(args) // 2], args[len(args) // 2:]):
            yield _chunk({"content": None, "tool_calls": [_Obj(id=None, index=0, function=_Obj(name=None, arguments=part))]})
        yield _chunk({"content": None}, "tool_calls")
        return
    for word in reply["text"].split(" "):
        yield _chunk({"content": word + " "})
    yield _chunk({"content": None}, "stop")


def supports_function_calling(model):
    return True


def supports_vision(model):
    return False
