//! The dup, tot and got agents through the engine: scripted conversations (OpenAI stream bodies
//! built here, decoded by the real codec) asserting the exact event sequence of each, the
//! requests the model gets, the history the session keeps, and runs checkpointed mid-way and
//! restored — from the last checkpoint the run asked for, as a restarted host would.

use std::collections::VecDeque;

use serde_json::{json, Value};
use weft_agent::engine::{
    Config, Effect, EngineError, Input, Output, Run, Session, Start, ToolInfo,
};
use weft_agent::provider::{
    ChatMessage, ChatRequest, Delta, Provider, ProviderError, StreamDecoder, ToolDef,
};
use weft_protocol::command::ApprovalDecision;
use weft_protocol::event::NodeResult;
use weft_protocol::{Agent, Event, Review, Sequenced};

mod checkpoints;
mod dup;
mod got;
mod tot;

// --- the scripted model -------------------------------------------------------------------

/// What the scripted model answers one request with.
enum Reply {
    /// Text, then these tool calls (name, arguments).
    Say(String, Vec<(&'static str, Value)>),
    /// An HTTP 500.
    Fail,
}

fn say(text: &str) -> Reply {
    Reply::Say(text.into(), Vec::new())
}

fn call(name: &'static str, args: Value) -> Reply {
    Reply::Say(String::new(), vec![(name, args)])
}

/// An OpenAI Chat Completions stream body: word deltas, tool calls in two fragments each, the
/// finish chunk, usage, `[DONE]`. Call ids are `call_<i>_<name>`: the same in every response,
/// as a provider numbering per response may give.
fn sse(text: &str, calls: &[(&str, Value)]) -> Vec<u8> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
               "model": "gpt-test", "choices": [{"index": 0, "delta": delta, "logprobs": null,
               "finish_reason": finish}]})
    };
    let mut out = Vec::new();
    out.push(chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ));
    for word in text.split_inclusive(' ') {
        out.push(chunk(json!({ "content": word }), Value::Null));
    }
    for (i, (name, args)) in calls.iter().enumerate() {
        let args = args.to_string();
        let (a, b) = args.split_at(args.len() / 2);
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": format!("call_{i}_{name}"), "type": "function",
                   "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        for part in [a, b] {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": part}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(chunk(json!({}), json!(finish)));
    let words = text.split_whitespace().count() as u64 + 1;
    out.push(json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
                    "model": "gpt-test", "choices": [],
                    "usage": {"prompt_tokens": 10, "completion_tokens": words, "total_tokens": 10 + words}}));
    let mut body = String::new();
    for c in out {
        body.push_str(&format!("data: {c}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// A reply as the engine gets it: deltas, then the end (or the failure).
fn decode(reply: Reply) -> (VecDeque<Delta>, Result<(), ProviderError>) {
    match reply {
        Reply::Say(text, calls) => {
            let mut d = StreamDecoder::new(Provider::OpenAi);
            let pushed = d.push(&sse(&text, &calls));
            let mut deltas = VecDeque::new();
            while let Some(delta) = d.poll() {
                deltas.push_back(delta);
            }
            (deltas, pushed.and_then(|()| d.finish()))
        }
        Reply::Fail => {
            let body =
                br#"{"error": {"message": "The server had an error", "type": "server_error"}}"#;
            let headers: [(&str, &str); 0] = [];
            (
                VecDeque::new(),
                Err(ProviderError::from_http(
                    Provider::OpenAi,
                    500,
                    headers,
                    body,
                )),
            )
        }
    }
}

/// The instruction an agent put after the persona, and the last user turn.
fn instruction(req: &ChatRequest) -> &str {
    req.system
        .as_deref()
        .and_then(|s| s.split_once("\n\n").map(|(_, i)| i))
        .unwrap_or("")
}

fn last_user(req: &ChatRequest) -> &str {
    req.messages
        .iter()
        .rev()
        .find_map(|m| match m {
            ChatMessage::User { content } => Some(content.as_str()),
            _ => None,
        })
        .unwrap_or("")
}

fn has_results(req: &ChatRequest) -> bool {
    matches!(req.messages.last(), Some(ChatMessage::Tool(_)))
}

// --- the host ------------------------------------------------------------------------------

struct Stream {
    call: u64,
    deltas: VecDeque<Delta>,
    end: Result<(), ProviderError>,
}

type Model = Box<dyn Fn(&ChatRequest) -> Reply>;
type Tool = Box<dyn Fn(&str, &Value) -> (String, bool)>;
type Stop = Box<dyn Fn(&[Sequenced], &[Stream]) -> bool>;

/// Plays the host: answers every model call with the scripted model, runs tools, answers
/// approvals, and saves the run at every checkpoint it asks for.
struct Host {
    model: Model,
    tool: Tool,
    approvals: VecDeque<ApprovalDecision>,
    /// Feed outstanding model calls one delta each in turn (else one call after the other).
    interleave: bool,
    /// Stop driving when this holds (to restart the run there).
    stop: Option<Stop>,
    events: Vec<Sequenced>,
    requests: Vec<ChatRequest>,
    tools_run: Vec<(String, Value)>,
    /// The most model calls outstanding at once.
    most_at_once: usize,
    /// The run as of the last checkpoint it asked for.
    saved: Option<String>,
    finished: bool,
    streams: Vec<Stream>,
    tools: Vec<(String, String, Value)>,
    awaiting: bool,
}

fn host(model: impl Fn(&ChatRequest) -> Reply + 'static) -> Host {
    Host {
        model: Box::new(model),
        tool: Box::new(|name, args| (format!("{name} says ok to {args}"), false)),
        approvals: VecDeque::new(),
        interleave: false,
        stop: None,
        events: Vec::new(),
        requests: Vec::new(),
        tools_run: Vec::new(),
        most_at_once: 0,
        saved: None,
        finished: false,
        streams: Vec::new(),
        tools: Vec::new(),
        awaiting: false,
    }
}

impl Host {
    fn drive(&mut self, run: &mut Run) {
        loop {
            while let Some(out) = run.poll() {
                match out {
                    Output::Event(e) => self.events.push(e),
                    Output::Effect(Effect::CallLlm { call, request }) => {
                        let (deltas, end) = decode((self.model)(&request));
                        self.requests.push(request);
                        self.streams.push(Stream { call, deltas, end });
                    }
                    Output::Effect(Effect::RunTool {
                        call_id,
                        name,
                        arguments,
                        ..
                    }) => self.tools.push((call_id, name, arguments)),
                    Output::Effect(Effect::AwaitApproval { .. }) => self.awaiting = true,
                    Output::Effect(Effect::CallRemote { .. }) => {
                        panic!("weft's own agents call no remote agent")
                    }
                    Output::Effect(Effect::Checkpoint) => {
                        self.saved = Some(run.checkpoint().expect("a run serializes"))
                    }
                    Output::Effect(Effect::Finished) => self.finished = true,
                }
            }
            self.most_at_once = self.most_at_once.max(self.streams.len());
            if self
                .stop
                .as_ref()
                .is_some_and(|stop| stop(&self.events, &self.streams))
            {
                return;
            }
            if !self.streams.is_empty() {
                let n = if self.interleave {
                    self.streams.len()
                } else {
                    1
                };
                let calls: Vec<u64> = self.streams.iter().take(n).map(|s| s.call).collect();
                for call in calls {
                    if let Some(i) = self.streams.iter().position(|s| s.call == call) {
                        self.feed(run, i, !self.interleave);
                    }
                }
            } else if !self.tools.is_empty() {
                for (call_id, name, arguments) in std::mem::take(&mut self.tools) {
                    let (result, is_error) = (self.tool)(&name, &arguments);
                    self.tools_run.push((name, arguments));
                    run.handle(Input::ToolResult {
                        call_id,
                        result,
                        is_error,
                    })
                    .unwrap();
                }
            } else if self.awaiting {
                let Some(d) = self.approvals.pop_front() else {
                    return;
                };
                self.awaiting = false;
                run.handle(Input::Approval(d)).unwrap();
            } else {
                return;
            }
        }
    }

    /// Feeds stream `i` one delta (or all of it), then its end.
    fn feed(&mut self, run: &mut Run, i: usize, all: bool) {
        loop {
            let s = &mut self.streams[i];
            let call = s.call;
            let input = match s.deltas.pop_front() {
                Some(delta) => Input::Llm { call, delta },
                None => {
                    let s = self.streams.remove(i);
                    let input = match s.end {
                        Ok(()) => Input::LlmEnd { call },
                        Err(error) => Input::LlmFailed { call, error },
                    };
                    // A call the run gave up on (its node failed, the run ended) is refused.
                    let _ = run.handle(input);
                    return;
                }
            };
            if let Err(e) = run.handle(input) {
                assert!(
                    matches!(e, EngineError::NoSuchLlmCall(_) | EngineError::Finished),
                    "{e}"
                );
                self.streams.remove(i);
                return;
            }
            if !all {
                return;
            }
        }
    }

    /// A restart: the run as of its last checkpoint, resumed after the last event logged; what
    /// was in flight is gone.
    fn restart(&mut self) -> Run {
        let mut run = Run::restore(self.saved.as_deref().unwrap()).unwrap();
        run.resume(self.last_id());
        self.streams.clear();
        self.tools.clear();
        // A restored run does not ask its approvals again (their questions are in its log):
        // the host knows it waits, as a client that comes back learns it by `resume`.
        self.awaiting = !run.pending_approvals().is_empty();
        self.stop = None;
        run
    }

    fn last_id(&self) -> u64 {
        self.events
            .last()
            .and_then(|e| e.envelope.event_id)
            .unwrap_or(0)
    }

    /// The events as one line each: the kind, and what tells spans and nodes apart. Runs of
    /// chunks from one node collapse into one line (their count depends on the splitting).
    fn trace(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in &self.events {
            let line = match &e.event {
                Event::NodeEnter { id } => format!("enter {id}"),
                Event::NodeExit {
                    id,
                    result: NodeResult::Ok,
                } => format!("exit {id}"),
                Event::NodeExit {
                    id,
                    result: NodeResult::Err(_),
                } => format!("exit {id} err"),
                Event::MessageChunk { id, .. } => format!("chunk {id}"),
                Event::ToolCallChunk { .. } => "tool_call_chunk".into(),
                Event::ToolCall { name, .. } => format!("tool_call {name}"),
                Event::ToolStart { call_id, .. } => {
                    format!("tool_start {}", call_id.as_deref().unwrap_or(""))
                }
                Event::ToolEnd { call_id, .. } => {
                    format!("tool_end {}", call_id.as_deref().unwrap_or(""))
                }
                Event::ToolApproval { call_id, .. } => {
                    format!("tool_approval {}", call_id.as_deref().unwrap_or(""))
                }
                Event::LlmComplete { finish_reason, .. } => {
                    format!("llm_complete {}", finish_reason.as_str())
                }
                Event::GotNodeStart { id } => format!("got_node_start {id}"),
                Event::GotNodeComplete { id, .. } => format!("got_node_complete {id}"),
                Event::GotNodeFailed { id, .. } => format!("got_node_failed {id}"),
                Event::GotExpand { node_id, .. } => format!("got_expand {node_id}"),
                other => other.kind().to_string(),
            };
            if (line.starts_with("chunk ") || line == "tool_call_chunk")
                && out.last() == Some(&line)
            {
                continue;
            }
            out.push(line);
        }
        out
    }

    fn find(&self, kind: &str) -> Vec<&Event> {
        self.events
            .iter()
            .map(|e| &e.event)
            .filter(|e| e.kind() == kind)
            .collect()
    }

    fn reply(&self) -> String {
        match &self.events.last().unwrap().event {
            Event::RunEnd { reply, .. } => reply.clone(),
            other => panic!("the run did not end with run_end: {other:?}"),
        }
    }

    /// Event ids run 1, 2, 3 … with no gap or repeat.
    fn assert_dense(&self) {
        let ids: Vec<u64> = self
            .events
            .iter()
            .map(|e| e.envelope.event_id.unwrap())
            .collect();
        assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    }

    /// Every sub-task response is a span of its own: `node_enter execute_graph` before its
    /// first event, `node_exit` right after its `llm_complete`; tools run between spans.
    fn assert_one_span_per_response(&self) {
        let mut open = false;
        for e in &self.events {
            match &e.event {
                Event::NodeEnter { id } if id == "execute_graph" => {
                    assert!(!open, "spans nest: {:?}", self.trace());
                    open = true;
                }
                Event::NodeExit { id, .. } if id == "execute_graph" => {
                    assert!(open, "an exit without its enter: {:?}", self.trace());
                    open = false;
                }
                Event::MessageChunk { id, .. } if id != "plan_graph" => {
                    assert!(
                        open,
                        "a sub-task's chunk outside a span: {:?}",
                        self.trace()
                    );
                }
                Event::ToolStart { .. } | Event::ToolEnd { .. } | Event::GotNodeStart { .. } => {
                    assert!(!open, "{} inside a response's span", e.event.kind());
                }
                _ => {}
            }
        }
        assert!(!open);
    }

    /// Each model response's events are contiguous: from its first chunk to its
    /// `llm_complete`, nothing but its own chunks, tool calls and usage.
    fn assert_responses_contiguous(&self) {
        let mut open: Option<String> = None;
        for e in &self.events {
            match &e.event {
                Event::MessageChunk { id, .. } | Event::ReasoningChunk { id, .. } => match &open {
                    Some(o) => assert_eq!(o, id, "two responses interleave: {:?}", self.trace()),
                    None => open = Some(id.clone()),
                },
                // A response's own tool calls and usage come before its `llm_complete`.
                Event::ToolCallChunk { .. } | Event::ToolCall { .. } | Event::Usage(_) => {}
                Event::LlmComplete { .. } => open = None,
                other => assert!(
                    open.is_none(),
                    "{} inside a streaming response: {:?}",
                    other.kind(),
                    self.trace()
                ),
            }
        }
    }
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn weather(needs_approval: bool) -> Vec<ToolInfo> {
    vec![ToolInfo {
        def: ToolDef {
            name: "get_weather".into(),
            description: "the weather in a city".into(),
            input_schema: json!({"type": "object"}),
        },
        needs_approval,
        client: false,
    }]
}

fn start(agent: Agent, message: &str) -> Start {
    Start {
        run_id: "run-1".into(),
        session_id: "sess-1".into(),
        message: message.into(),
        agent,
        thread_id: None,
        verbose: false,
        working_folder: None,
        got_adaptive: false,
    }
}

fn yes() -> ApprovalDecision {
    ApprovalDecision {
        call_id: None,
        review: Review::Yes,
        custom_deny_message: None,
        explanation: None,
    }
}
