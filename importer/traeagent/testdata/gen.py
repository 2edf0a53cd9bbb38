# Writes a trajectory with Trae Agent's own TrajectoryRecorder and the
# types it records (trae_agent at e839e559), called in the order its
# TraeAgent.new_task, BaseAgent.execute_task, _run_llm_step,
# _tool_call_handler, _finalize_step and the OpenAI client's chat call
# it; the model's replies as that client turns a Responses API answer
# into an LLMResponse. The bash call ran for real.
# Usage: python3 gen.py PROJECT OUT (from the source's root, with load.py)
import subprocess, sys, types
exec(open("load.py").read())
prompt = load("trae_agent.prompt.agent_prompt", "trae_agent/prompt/agent_prompt.py")
LLMMessage, LLMResponse, LLMUsage = basics.LLMMessage, basics.LLMResponse, basics.LLMUsage
ToolCall, ToolResult = base.ToolCall, base.ToolResult
project, out = sys.argv[1], sys.argv[2]
tools = [types.SimpleNamespace(name=n) for n in ["str_replace_based_edit_tool", "sequentialthinking", "json_edit_tool", "task_done", "bash"]]
task = "How many lines does notes.txt have?"
r = rec.TrajectoryRecorder(out)
# TraeAgent.new_task
messages = [LLMMessage(role="system", content=prompt.TRAE_AGENT_SYSTEM_PROMPT),
            LLMMessage(role="user", content=f"[Project root path]:\n{project}\n\n" +
                       f"[Problem statement]: We're currently solving the following issue within our repository. Here's the issue text:\n{task}\n")]
r.start_recording(task=task, provider="openai", model="gpt-fake", max_steps=200)
# step 1: a bash call, run, its result the next input
call = ToolCall(name="bash", call_id="call_1", arguments={"command": "wc -l notes.txt"}, id="fc_1")
resp = LLMResponse(content="Let me count the lines.", usage=LLMUsage(input_tokens=1200, output_tokens=30, cache_read_input_tokens=0, reasoning_tokens=0),
                   model="gpt-fake-2026", finish_reason="completed", tool_calls=[call])
r.record_llm_interaction(messages=messages, response=resp, provider="openai", model="gpt-fake", tools=tools)
res = subprocess.run(["bash", "-c", "wc -l notes.txt"], cwd=project, capture_output=True, text=True)
result = ToolResult(call_id="call_1", name="bash", success=res.returncode == 0, result=res.stdout, error=res.stderr or None, id="fc_1")
messages = [LLMMessage(role="user", tool_result=result)]
r.record_agent_step(step_number=1, state="completed", llm_messages=messages, llm_response=resp, tool_calls=[call], tool_results=[result], reflection=None, error=None)
# step 2: task_done ends the run (not executed)
done = ToolCall(name="task_done", call_id="call_2", arguments={}, id="fc_2")
resp = LLMResponse(content="notes.txt has 2 lines.", usage=LLMUsage(input_tokens=1500, output_tokens=20, cache_read_input_tokens=1024, reasoning_tokens=8),
                   model="gpt-fake-2026", finish_reason="completed", tool_calls=[done])
r.record_llm_interaction(messages=messages, response=resp, provider="openai", model="gpt-fake", tools=tools)
r.record_agent_step(step_number=2, state="completed", llm_messages=messages, llm_response=resp, tool_calls=None, tool_results=None, reflection=None, error=None)
r.finalize_recording(success=True, final_result="notes.txt has 2 lines.")
