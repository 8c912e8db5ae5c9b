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
        self.awaiting = false;
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

// --- dup -----------------------------------------------------------------------------------

const UNDERSTANDING: &str =
    "Core goal: the weather in SF. Key constraints: be short. Relevant context: none.";

fn dup_model(req: &ChatRequest) -> Reply {
    let i = instruction(req);
    if i.starts_with("Understand the problem first.") {
        return say(UNDERSTANDING);
    }
    assert!(i.starts_with("Plan, act, observe."), "{i}");
    if has_results(req) {
        say("It is sunny in SF.")
    } else {
        Reply::Say(
            "I will look it up. ".into(),
            vec![("get_weather", json!({"city": "SF"}))],
        )
    }
}

fn dup_run(approval: bool) -> Run {
    let mut run = Run::new(
        Config::default(),
        weather(approval),
        Session::default(),
        &start(Agent::Dup, "Weather in SF?"),
    );
    run.start();
    run
}

const DUP_TRACE: &[&str] = &[
    "run_start",
    "enter understand",
    "chunk understand",
    "usage",
    "llm_complete stop",
    "context_info",
    "exit understand",
    "enter plan",
    "chunk plan",
    "tool_call_chunk",
    "tool_call get_weather",
    "usage",
    "llm_complete tool_calls",
    "context_info",
    "exit plan",
    "enter act",
    "tool_start call_0_get_weather",
    "tool_end call_0_get_weather",
    "exit act",
    "enter observe",
    "context_info",
    "exit observe",
    "enter plan",
    "chunk plan",
    "usage",
    "llm_complete stop",
    "context_info",
    "exit plan",
    "run_end",
];

#[test]
fn dup_understands_then_plans_acts_and_observes() {
    let mut run = dup_run(false);
    let mut h = host(dup_model);
    h.drive(&mut run);
    assert_eq!(h.trace(), lines(DUP_TRACE));
    assert!(h.finished);
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    // understand offers no tools; plan offers them; the first plan repeats the request after
    // the understanding, the second answers the results.
    assert!(h.requests[0].tools.is_empty());
    assert_eq!(h.requests[1].tools.len(), 1);
    assert_eq!(
        last_user(&h.requests[1]),
        "With that understanding, carry out my request: Weather in SF?"
    );
    assert!(has_results(&h.requests[2]));
    // The understanding stays in the history, as an assistant turn; the cue does not.
    let history = &run.session().history;
    assert_eq!(history.len(), 5, "{history:?}");
    assert_eq!(history[1], ChatMessage::assistant(UNDERSTANDING));
    assert!(
        matches!(&history[2], ChatMessage::Assistant { tool_calls, .. } if tool_calls.len() == 1)
    );
    assert!(
        matches!(&history[3], ChatMessage::Tool(r) if r.content.starts_with("get_weather says ok"))
    );
    assert_eq!(history[4], ChatMessage::assistant("It is sunny in SF."));
    // Every model call is a round trip: understand + two plans.
    let Event::RunEnd {
        iteration_count,
        total_usage,
        ..
    } = &h.events.last().unwrap().event
    else {
        panic!()
    };
    assert_eq!(*iteration_count, Some(3));
    assert_eq!(h.find("usage").len(), 3);
    assert!(total_usage.unwrap().total_tokens > 30);
}

#[test]
fn dup_survives_a_restart_while_an_approval_waits() {
    let mut reference = host(dup_model);
    reference.approvals.push_back(yes());
    reference.drive(&mut dup_run(true));

    let mut run = dup_run(true);
    let mut h = host(dup_model);
    h.drive(&mut run);
    assert_eq!(h.events.last().unwrap().event.kind(), "tool_approval");
    drop(run);
    let mut run = h.restart();
    assert_eq!(run.pending_approvals(), ["call_0_get_weather"]);
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert!(h.finished);
    assert_eq!(h.trace(), reference.trace());
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    assert_eq!(run.session().history.len(), 5);
}

// --- tot -----------------------------------------------------------------------------------

/// The tot script: Paris fails, SF works; after a result, answering wins.
fn tot_model(req: &ChatRequest) -> Reply {
    let i = instruction(req);
    if i.starts_with("Tree of thoughts: propose next steps.") {
        return if has_results(req) {
            say(r#"{"candidates": ["Answer: sunny", "Check again"]}"#)
        } else {
            say(r#"{"candidates": ["Look up Paris", "Look up SF", "Guess"]}"#)
        };
    }
    if i.starts_with("Tree of thoughts: score the candidates.") {
        return if i.contains("Answer: sunny") {
            say(r#"{"scores": [0.95, 0.2]}"#)
        } else {
            say(r#"{"scores": [0.9, 0.8, 0.1]}"#)
        };
    }
    if let Some(step) = i.strip_prefix("Tree of thoughts: carry out this step: ") {
        let step = step.lines().next().unwrap_or_default();
        return match step {
            "Look up Paris" => call("get_weather", json!({"city": "Paris"})),
            "Look up SF" => call("get_weather", json!({"city": "SF"})),
            _ => say("It is sunny in SF."),
        };
    }
    say("It is sunny, I think.")
}

fn tot_tool() -> Tool {
    Box::new(|_, args| {
        if args["city"] == "Paris" {
            ("no such city in this test".into(), true)
        } else {
            ("sunny".into(), false)
        }
    })
}

const TOT_TRACE: &[&str] = &[
    "run_start",
    "enter think_expand",
    "chunk think_expand",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_expand",
    "exit think_expand",
    "enter think_evaluate",
    "chunk think_evaluate",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_evaluate",
    "exit think_evaluate",
    "enter act",
    "tool_call_chunk",
    "tool_call get_weather",
    "usage",
    "llm_complete tool_calls",
    "context_info",
    "tool_start call_0_get_weather",
    "tool_end call_0_get_weather",
    "tot_backtrack",
    "exit act err",
    "enter act",
    "tool_call_chunk",
    "tool_call get_weather",
    "usage",
    "llm_complete tool_calls",
    "context_info",
    "tool_start call_0_get_weather",
    "tool_end call_0_get_weather",
    "exit act",
    "enter think_expand",
    "chunk think_expand",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_expand",
    "exit think_expand",
    "enter think_evaluate",
    "chunk think_evaluate",
    "usage",
    "llm_complete stop",
    "context_info",
    "tot_evaluate",
    "exit think_evaluate",
    "enter act",
    "chunk act",
    "usage",
    "llm_complete stop",
    "context_info",
    "exit act",
    "run_end",
];

fn tot_run(tools: Vec<ToolInfo>, config: Config) -> Run {
    let mut run = Run::new(
        config,
        tools,
        Session::default(),
        &start(Agent::Tot, "Weather?"),
    );
    run.start();
    run
}

#[test]
fn tot_expands_evaluates_acts_and_backtracks_from_a_failed_step() {
    let mut run = tot_run(weather(false), Config::default());
    let mut h = host(tot_model);
    h.tool = tot_tool();
    h.drive(&mut run);
    assert_eq!(h.trace(), lines(TOT_TRACE));
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    assert_eq!(
        h.find("tot_expand")[0],
        &Event::TotExpand {
            candidates: vec!["Look up Paris".into(), "Look up SF".into(), "Guess".into()]
        }
    );
    assert_eq!(
        h.find("tot_evaluate"),
        [
            &Event::TotEvaluate {
                chosen: 0,
                scores: vec![0.9, 0.8, 0.1]
            },
            &Event::TotEvaluate {
                chosen: 0,
                scores: vec![0.95, 0.2]
            }
        ]
    );
    assert_eq!(
        h.find("tot_backtrack"),
        [&Event::TotBacktrack {
            reason: "the step failed: get_weather failed: no such city in this test".into(),
            to_depth: 0
        }]
    );
    // Expanding and evaluating offer no tools; acting does. The second expand knows what was
    // abandoned, and asks for three candidates.
    assert!(h.requests[0].tools.is_empty() && h.requests[1].tools.is_empty());
    assert_eq!(h.requests[2].tools.len(), 1);
    let second_expand = instruction(&h.requests[4]);
    assert!(second_expand.contains("propose exactly 3"));
    assert!(
        second_expand.contains("tried and abandoned") && second_expand.contains("- Look up Paris")
    );
    // The failed branch left the history: only the SF call and its result remain of the path.
    assert!(!h.requests[3]
        .messages
        .iter()
        .any(|m| matches!(m, ChatMessage::Tool(r) if r.is_error)));
    let history = &run.session().history;
    assert_eq!(history.len(), 4, "{history:?}");
    assert!(matches!(&history[2], ChatMessage::Tool(r) if r.content == "sunny"));
    assert_eq!(history[3], ChatMessage::assistant("It is sunny in SF."));
    assert_eq!(h.tools_run.len(), 2);
}

#[test]
fn tot_backtracks_when_every_candidate_scores_low() {
    // Depth 0: A (0.9) then B (0.7); A works, but depth 1 only scores 0.2 and 0.1: back to B.
    let model = |req: &ChatRequest| {
        let i = instruction(req);
        if i.starts_with("Tree of thoughts: propose") {
            return if has_results(req) {
                say(r#"{"candidates": ["C", "D"]}"#)
            } else {
                say(r#"{"candidates": ["A", "B"]}"#)
            };
        }
        if i.starts_with("Tree of thoughts: score") {
            return if i.contains("1. C") {
                say(r#"{"scores": [0.2, 0.1]}"#)
            } else {
                say(r#"{"scores": [0.9, 0.7]}"#)
            };
        }
        match i.lines().next().unwrap_or_default() {
            "Tree of thoughts: carry out this step: A" => call("get_weather", json!({"city": "A"})),
            "Tree of thoughts: carry out this step: B" => say("B says sunny."),
            other => panic!("unexpected step {other}"),
        }
    };
    let config = Config {
        tot_candidates: 2,
        ..Config::default()
    };
    let mut run = tot_run(weather(false), config);
    let mut h = host(model);
    h.drive(&mut run);
    let trace = h.trace();
    let evaluate_exit = trace
        .iter()
        .rposition(|l| l == "exit think_evaluate")
        .unwrap();
    assert_eq!(
        trace[evaluate_exit - 2..],
        lines(&[
            "tot_evaluate",
            "tot_backtrack",
            "exit think_evaluate",
            "enter act",
            "chunk act",
            "usage",
            "llm_complete stop",
            "context_info",
            "exit act",
            "run_end"
        ])
    );
    assert_eq!(
        h.find("tot_backtrack"),
        [&Event::TotBacktrack {
            reason: "the best candidate scored 0.20, under the threshold 0.50".into(),
            to_depth: 0
        }]
    );
    assert_eq!(h.reply(), "B says sunny.");
    // Back at depth 0, A's call and result are gone from what B sees and from the history.
    let b = h.requests.last().unwrap();
    assert_eq!(b.messages, vec![ChatMessage::user("Weather?")]);
    assert_eq!(run.session().history.len(), 2);
    assert!(instruction(&h.requests[2]).starts_with("Tree of thoughts: carry out this step: A"));
}

#[test]
fn tot_gives_the_final_answer_without_tools_at_the_depth_limit() {
    let model = |req: &ChatRequest| {
        let i = instruction(req);
        if i.starts_with("Tree of thoughts: propose") {
            say(r#"{"candidates": ["Look up SF"]}"#)
        } else if i.starts_with("Tree of thoughts: score") {
            say("I'd say 7/10: [7]")
        } else if i.starts_with("Tree of thoughts: give the final answer.") {
            say("Sunny, from the lookup.")
        } else {
            call("get_weather", json!({"city": "SF"}))
        }
    };
    let config = Config {
        tot_max_depth: 1,
        ..Config::default()
    };
    let mut run = tot_run(weather(false), config);
    let mut h = host(model);
    h.drive(&mut run);
    assert_eq!(h.reply(), "Sunny, from the lookup.");
    let last = h.requests.last().unwrap();
    assert!(
        last.tools.is_empty(),
        "the final answer is asked for without tools"
    );
    assert!(has_results(last));
    // Unparsable scores leave the candidate at the threshold: it is carried out.
    assert_eq!(
        h.find("tot_evaluate"),
        [&Event::TotEvaluate {
            chosen: 0,
            scores: vec![0.5]
        }]
    );
    assert_eq!(h.requests.len(), 4);
}

#[test]
fn tot_survives_a_restart_in_the_middle_of_a_step() {
    let mut reference = host(tot_model);
    reference.tool = tot_tool();
    reference.approvals.extend([yes(), yes()]);
    reference.drive(&mut tot_run(weather(true), Config::default()));
    assert_eq!(reference.reply(), "It is sunny in SF.");

    // Stop at the second approval (after the backtrack), restart from the checkpoint.
    let mut run = tot_run(weather(true), Config::default());
    let mut h = host(tot_model);
    h.tool = tot_tool();
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert_eq!(h.find("tot_backtrack").len(), 1);
    assert_eq!(h.events.last().unwrap().event.kind(), "tool_approval");
    drop(run);
    let mut run = h.restart();
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert_eq!(h.trace(), reference.trace());
    h.assert_dense();
    assert_eq!(h.reply(), "It is sunny in SF.");
    assert_eq!(run.session().history, reference_history(&reference));
}

fn reference_history(h: &Host) -> Vec<ChatMessage> {
    // The history as the reference run's last request saw it, plus its answer.
    let mut history = h.requests.last().unwrap().messages.clone();
    history.push(ChatMessage::assistant(h.reply()));
    history
}

// --- got -----------------------------------------------------------------------------------

const PLAN: &str = r#"{"nodes": [
    {"id": "sf", "task": "Weather in SF", "deps": []},
    {"id": "ny", "task": "Weather in NYC", "deps": []},
    {"id": "cmp", "task": "Compare them", "deps": ["sf", "ny"]}]}"#;

/// The got script: the plan above; each city node looks its weather up, then says it; `cmp`
/// compares what it was given.
fn got_model(req: &ChatRequest) -> Reply {
    let i = instruction(req);
    if i.starts_with("Graph of thoughts: plan sub-tasks.") {
        return say(PLAN);
    }
    if i.starts_with("Graph of thoughts: judge a sub-task.") {
        return say(r#"{"complex": false}"#);
    }
    assert!(
        i.starts_with("Graph of thoughts: you are doing one sub-task"),
        "{i}"
    );
    let brief = match req.messages.first() {
        Some(ChatMessage::User { content }) => content.clone(),
        _ => String::new(),
    };
    let city = if brief.starts_with("Sub-task sf:") {
        "SF"
    } else if brief.starts_with("Sub-task ny:") {
        "NYC"
    } else {
        return say("SF is sunnier than NYC.");
    };
    if has_results(req) {
        say(&format!("{city} is sunny."))
    } else {
        call("get_weather", json!({ "city": city }))
    }
}

fn got_run(tools: Vec<ToolInfo>, adaptive: bool) -> Run {
    let start = Start {
        got_adaptive: adaptive,
        ..start(Agent::Got, "Compare the weather in SF and NYC")
    };
    let mut run = Run::new(Config::default(), tools, Session::default(), &start);
    run.start();
    run
}

#[test]
fn got_runs_independent_nodes_together_and_answers_from_the_sink() {
    let mut run = got_run(weather(false), false);
    let mut h = host(got_model);
    h.interleave = true;
    h.drive(&mut run);
    assert_eq!(
        h.trace(),
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start sf",
            "got_node_start ny",
            // sf and ny stream at once; ny's response waits for sf's to end, and what came
            // after sf's response (its tool starting) waits for ny's: what belongs to no
            // response goes out in the order it happened, after what was held before it.
            "enter execute_graph",
            "tool_call_chunk",
            "tool_call get_weather",
            "usage",
            "llm_complete tool_calls",
            "exit execute_graph",
            "enter execute_graph",
            "tool_call_chunk",
            "tool_call get_weather",
            "usage",
            "llm_complete tool_calls",
            "exit execute_graph",
            "tool_start call_0_get_weather",
            "tool_start call_0_get_weather_2",
            "tool_end call_0_get_weather",
            "tool_end call_0_get_weather_2",
            "enter execute_graph",
            "chunk sf",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "enter execute_graph",
            "chunk ny",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete sf",
            "got_node_complete ny",
            "got_node_start cmp",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete cmp",
            "run_end",
        ])
    );
    h.assert_dense();
    h.assert_responses_contiguous();
    h.assert_one_span_per_response();
    assert_eq!(h.most_at_once, 2, "sf and ny were asked at the same time");
    assert_eq!(
        h.find("got_plan"),
        [&Event::GotPlan {
            node_count: 3,
            edge_count: 2,
            node_ids: vec!["sf".into(), "ny".into(), "cmp".into()]
        }]
    );
    // Both nodes' calls got the provider's id `call_0_get_weather`: the second was renamed,
    // and each result went to its own node.
    let ends: Vec<(String, String)> = h
        .find("tool_end")
        .iter()
        .map(|e| match e {
            Event::ToolEnd {
                call_id, result, ..
            } => (call_id.clone().unwrap(), result.clone()),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(ends[0].0, "call_0_get_weather");
    assert!(ends[0].1.contains("SF"));
    assert_eq!(ends[1].0, "call_0_get_weather_2");
    assert!(ends[1].1.contains("NYC"));
    // The sub-task chunks carry the graph node's id; cmp's brief has both results.
    let cmp = h
        .requests
        .iter()
        .find_map(|r| match r.messages.first() {
            Some(ChatMessage::User { content }) if content.starts_with("Sub-task cmp:") => {
                Some(content.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        cmp,
        "Sub-task cmp: Compare them\n\nThe whole request: Compare the weather in SF and NYC\n\n\
         Results it builds on:\n- sf (Weather in SF): SF is sunny.\n- ny (Weather in NYC): NYC is sunny."
    );
    assert_eq!(
        h.find("got_node_complete")[0],
        &Event::GotNodeComplete {
            id: "sf".into(),
            result_summary: "SF is sunny.".into()
        }
    );
    assert_eq!(h.reply(), "SF is sunnier than NYC.");
    // The history keeps the request and the reply, not the plan or the sub-tasks.
    assert_eq!(
        run.session().history,
        vec![
            ChatMessage::user("Compare the weather in SF and NYC"),
            ChatMessage::assistant("SF is sunnier than NYC.")
        ]
    );
    let Event::RunEnd {
        iteration_count, ..
    } = &h.events.last().unwrap().event
    else {
        panic!()
    };
    assert_eq!(*iteration_count, Some(6), "plan + 2 per city + cmp");
}

/// A node is not reported started before the nodes it depends on are reported complete, even
/// when a dependency finished while another node's response held the stream.
#[test]
fn got_a_node_finished_behind_a_streaming_response_is_not_overtaken() {
    // sf's answer is long and ny's short: fed a delta each in turn, ny ends while sf streams
    // (its events wait), then sf's end completes the last dependency of cmp.
    let model = |req: &ChatRequest| {
        let brief = match req.messages.first() {
            Some(ChatMessage::User { content }) => content.clone(),
            _ => String::new(),
        };
        if brief.starts_with("Sub-task sf:") && has_results(req) {
            say("SF is sunny, warm and clear from morning to night with a light breeze.")
        } else {
            got_model(req)
        }
    };
    let mut run = got_run(weather(false), false);
    let mut h = host(model);
    h.interleave = true;
    h.drive(&mut run);
    assert!(h.finished);
    let trace = h.trace();
    let at = |line: &str| trace.iter().position(|l| l == line).unwrap();
    assert!(
        at("llm_complete stop") < at("got_node_complete ny"),
        "{trace:?}"
    );
    assert!(
        at("got_node_complete ny") < at("got_node_complete sf"),
        "ny ended first: {trace:?}"
    );
    assert!(
        at("got_node_complete sf") < at("got_node_start cmp"),
        "{trace:?}"
    );
    h.assert_dense();
    h.assert_responses_contiguous();
    h.assert_one_span_per_response();
    assert_eq!(h.reply(), "SF is sunnier than NYC.");
}

#[test]
fn got_a_failed_node_and_an_approval_inside_a_node() {
    // sf needs an approval for its tool; ny's model call fails; cmp still runs, told so.
    let model = |req: &ChatRequest| match req.messages.first() {
        Some(ChatMessage::User { content }) if content.starts_with("Sub-task ny:") => Reply::Fail,
        _ => got_model(req),
    };
    let mut run = got_run(weather(true), false);
    let mut h = host(model);
    h.interleave = true;
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert_eq!(
        h.trace(),
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start sf",
            "got_node_start ny",
            "enter execute_graph",
            "tool_call_chunk",
            "tool_call get_weather",
            "usage",
            "llm_complete tool_calls",
            "exit execute_graph",
            // ny failed while sf's response streamed, before sf asked for its approval.
            "got_node_failed ny",
            "tool_approval call_0_get_weather",
            "approval_resolved",
            "tool_start call_0_get_weather",
            "tool_end call_0_get_weather",
            "enter execute_graph",
            "chunk sf",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete sf",
            "got_node_start cmp",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete cmp",
            "run_end",
        ])
    );
    h.assert_one_span_per_response();
    h.assert_dense();
    h.assert_responses_contiguous();
    let Event::GotNodeFailed { error, .. } = h.find("got_node_failed")[0] else {
        panic!()
    };
    assert!(error.contains("500"), "{error}");
    let cmp = h.requests.last().unwrap();
    assert!(
        last_user(cmp).contains("- ny (Weather in NYC): FAILED: "),
        "{}",
        last_user(cmp)
    );
    assert_eq!(h.reply(), "SF is sunnier than NYC.");
    assert_eq!(h.tools_run.len(), 1);
}

#[test]
fn got_fails_the_run_when_every_answer_node_failed() {
    let model = |req: &ChatRequest| {
        if instruction(req).starts_with("Graph of thoughts: plan") {
            say(r#"{"nodes": [{"id": "only", "task": "Do it"}]}"#)
        } else {
            Reply::Fail
        }
    };
    let mut run = got_run(weather(false), false);
    let mut h = host(model);
    h.drive(&mut run);
    let trace = h.trace();
    assert_eq!(
        trace[trace.len() - 3..],
        lines(&["got_node_start only", "got_node_failed only", "error"])
    );
    let Event::Error { code, message, .. } = &h.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(code.as_deref(), Some("graph_failed"));
    assert!(message.starts_with("every sub-task that gives the answer failed (only: "));
    assert!(run.is_finished() && h.finished);
}

#[test]
fn got_adaptive_expands_a_complex_node_into_a_sub_graph() {
    let model = |req: &ChatRequest| {
        let i = instruction(req);
        let brief = last_user(req).to_string();
        if i.starts_with("Graph of thoughts: plan") {
            return say(
                r#"{"nodes": [{"id": "both", "task": "Weather in SF and NYC"},
                              {"id": "cmp", "task": "Compare them", "deps": ["both"]}]}"#,
            );
        }
        if i.starts_with("Graph of thoughts: judge") {
            return if brief.starts_with("Sub-task both:") {
                say(
                    r#"{"complex": true, "nodes": [{"id": "sf", "task": "Weather in SF"}, {"id": "ny", "task": "Weather in NYC"}]}"#,
                )
            } else {
                say(r#"{"complex": false}"#)
            };
        }
        if brief.starts_with("Sub-task both.sf:") {
            say("SF is sunny.")
        } else if brief.starts_with("Sub-task both.ny:") {
            say("NYC is sunny.")
        } else {
            say("Both are sunny.")
        }
    };
    let mut run = got_run(weather(false), true);
    let mut h = host(model);
    h.drive(&mut run);
    assert_eq!(
        h.trace(),
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start both",
            "enter execute_graph",
            "chunk both",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_expand both",
            "got_node_start both.sf",
            "got_node_start both.ny",
            "enter execute_graph",
            "chunk both.sf",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete both.sf",
            "enter execute_graph",
            "chunk both.ny",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete both.ny",
            "got_node_start cmp",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete cmp",
            "run_end",
        ])
    );
    h.assert_one_span_per_response();
    assert_eq!(
        h.find("got_expand"),
        [&Event::GotExpand {
            node_id: "both".into(),
            nodes_added: 2,
            edges_added: 2
        }]
    );
    // Sub-nodes are not judged again; cmp (an original node) is, and builds on both halves.
    let judged: Vec<String> = h
        .requests
        .iter()
        .filter(|r| instruction(r).starts_with("Graph of thoughts: judge"))
        .map(|r| last_user(r).lines().next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        judged,
        [
            "Sub-task both: Weather in SF and NYC",
            "Sub-task cmp: Compare them"
        ]
    );
    let cmp = last_user(h.requests.last().unwrap());
    assert!(
        cmp.contains(
            "- both.sf (Weather in SF): SF is sunny.\n- both.ny (Weather in NYC): NYC is sunny."
        ),
        "{cmp}"
    );
    assert_eq!(h.reply(), "Both are sunny.");
    h.assert_dense();
}

#[test]
fn got_asks_again_once_for_a_bad_plan_then_fails_clearly() {
    let cyclic = r#"{"nodes": [{"id": "a", "task": "A", "deps": ["b"]}, {"id": "b", "task": "B", "deps": ["a"]}]}"#;
    // Bad, then good.
    let model = move |req: &ChatRequest| {
        let i = instruction(req);
        if i.starts_with("Graph of thoughts: plan") {
            if i.contains("previous plan was rejected") {
                say(r#"{"nodes": [{"id": "a", "task": "A"}]}"#)
            } else {
                say(cyclic)
            }
        } else {
            say("A done.")
        }
    };
    let mut run = got_run(weather(false), false);
    let mut h = host(model);
    h.drive(&mut run);
    assert_eq!(
        h.trace()[..15],
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "exit plan_graph err",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start a",
        ])
    );
    assert!(instruction(&h.requests[1])
        .contains("Your previous plan was rejected: the graph has a cycle through `a`, `b`."));
    assert_eq!(h.reply(), "A done.");

    // Bad twice: a clear error.
    let mut run = got_run(weather(false), false);
    let mut h = host(move |_| say(cyclic));
    h.drive(&mut run);
    let Event::Error { code, message, .. } = &h.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(code.as_deref(), Some("invalid_plan"));
    assert_eq!(
        message,
        "the model's plan is not a valid graph of sub-tasks: the graph has a cycle through `a`, `b`"
    );
    assert_eq!(h.requests.len(), 2);
}

#[test]
fn got_survives_a_restart_while_two_nodes_stream() {
    let mut reference = host(got_model);
    reference.interleave = true;
    reference.drive(&mut got_run(weather(false), false));

    // Stop once sf and ny have both streamed part of their first responses (sf's went out,
    // ny's is held), as if the host died there.
    let mut run = got_run(weather(false), false);
    let mut h = host(got_model);
    h.interleave = true;
    h.stop = Some(Box::new(|events, streams| {
        streams.len() == 2 && events.iter().any(|e| e.event.kind() == "tool_call_chunk")
    }));
    h.drive(&mut run);
    let seen = h.events.len();
    assert_eq!(h.events.last().unwrap().event.kind(), "tool_call_chunk");
    drop(run);
    let mut run = h.restart();
    h.drive(&mut run);
    assert!(h.finished);
    h.assert_dense();
    assert_eq!(h.reply(), reference.reply());
    // sf's cut response is closed right after its chunks (ny's had sent nothing), then both
    // nodes are asked again and the run goes on as the uninterrupted one did.
    assert_eq!(
        h.events[seen].event,
        Event::LlmComplete {
            content: String::new(),
            tool_calls: Vec::new(),
            finish_reason: "interrupted".into()
        }
    );
    assert_eq!(
        h.events[seen + 1].event,
        Event::NodeExit {
            id: "execute_graph".into(),
            result: NodeResult::Err("interrupted by a restart".into())
        }
    );
    let trace = h.trace();
    let reference_trace = reference.trace();
    let from = |t: &[String]| t.iter().position(|l| l == "enter execute_graph").unwrap();
    let (a, b) = (from(&trace), from(&reference_trace));
    assert_eq!(trace[..a], reference_trace[..b]);
    assert_eq!(
        trace[a..a + 4],
        lines(&[
            "enter execute_graph",
            "tool_call_chunk",
            "llm_complete interrupted",
            "exit execute_graph err"
        ])
    );
    assert_eq!(trace[a + 4..], reference_trace[b..]);
    h.assert_one_span_per_response();
    assert_eq!(run.session().history, reference_history_got(&reference));
}

fn reference_history_got(h: &Host) -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("Compare the weather in SF and NYC"),
        ChatMessage::assistant(h.reply()),
    ]
}

#[test]
fn got_cancel_while_nodes_stream_ends_cleanly() {
    let mut run = got_run(weather(false), false);
    let mut h = host(got_model);
    h.interleave = true;
    h.stop = Some(Box::new(|events, streams| {
        streams.len() == 2 && events.iter().any(|e| e.event.kind() == "tool_call_chunk")
    }));
    h.drive(&mut run);
    let pending = run.pending_llm_calls();
    assert_eq!(pending.len(), 2);
    run.handle(Input::Cancel).unwrap();
    h.stop = None;
    h.drive(&mut run);
    let trace = h.trace();
    assert_eq!(
        trace[trace.len() - 3..],
        lines(&["llm_complete cancelled", "exit execute_graph err", "error"])
    );
    h.assert_responses_contiguous();
    // Only sf's chunk went out; what ny had streamed was held and is dropped with it.
    assert_eq!(h.find("tool_call_chunk").len(), 1);
    assert!(run.is_finished());
    assert_eq!(
        run.handle(Input::LlmEnd { call: pending[1] }),
        Err(EngineError::Finished)
    );
}

#[test]
fn inputs_for_unknown_model_calls_are_refused() {
    let mut run = got_run(weather(false), false);
    let pending = run.pending_llm_calls();
    assert_eq!(pending, [1]);
    assert_eq!(
        run.handle(Input::LlmEnd { call: 7 }),
        Err(EngineError::NoSuchLlmCall(7))
    );
    assert_eq!(
        run.handle(Input::Llm {
            call: 0,
            delta: Delta::Text("x".into())
        }),
        Err(EngineError::NoSuchLlmCall(0))
    );
}
