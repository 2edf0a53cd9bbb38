# Stand-in for tokentrim: trim() as it is on messages far under the
# token limit, the system message put first. Only what is sent to the
# model goes through it, not what the conversation file keeps.
def trim(messages, model=None, system_message=None, max_tokens=None, **kw):
    return ([{"role": "system", "content": system_message}] if system_message else []) + list(messages)
