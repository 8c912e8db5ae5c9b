//! Replies with and without tools.

use super::*;

#[test]
fn plain_reply() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Hi"),
    );
    let mut host = Host {
        streams: [TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(
        collapse(host.kinds()),
        [
            "run_start",
            "node_enter",
            "message_chunk",
            "usage",
            "llm_complete",
            "context_info",
            "node_exit",
            "run_end"
        ]
    );
    assert!(host.finished);
    let text: String = host
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::MessageChunk { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert!(!text.is_empty());
    assert_eq!(reply_of(&host), text);
    // event ids are dense from 1, node ids follow the spans.
    for (i, e) in host.events.iter().enumerate() {
        assert_eq!(e.envelope.event_id, Some(i as u64 + 1));
        assert_eq!(e.envelope.run_id.as_deref(), Some("run-1"));
    }
    assert_eq!(
        host.events[1].envelope.node_id.as_deref(),
        Some("run-think-0")
    );
    // The session keeps the exchange.
    let history = &run.session().history;
    assert_eq!(history.len(), 2);
    assert_eq!(history[0], ChatMessage::user("Hi"));
    assert!(matches!(&history[1], ChatMessage::Assistant { content, .. } if content == &text));
    // The request carried the system prompt, the message and the tools.
    let req = &host.requests[0];
    assert_eq!(req.messages, vec![ChatMessage::user("Hi")]);
    assert_eq!(req.tools.len(), 3);
    assert!(req.system.is_some());
}

#[test]
fn one_tool_then_the_reply() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Weather in SF?"),
    );
    let mut host = Host {
        streams: [ONE_TOOL, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(
        collapse(host.kinds()),
        [
            "run_start",
            "node_enter",
            "message_chunk",
            "tool_call_chunk",
            "tool_call",
            "usage",
            "llm_complete",
            "context_info",
            "node_exit",
            "node_enter",
            "tool_start",
            "tool_end",
            "node_exit",
            "node_enter",
            "message_chunk",
            "usage",
            "llm_complete",
            "context_info",
            "node_exit",
            "run_end",
        ]
    );
    assert_eq!(host.tools_run, ["get_weather"]);
    // The second model call sees the call and its result.
    let second = &host.requests[1].messages;
    assert!(
        matches!(&second[1], ChatMessage::Assistant { tool_calls, .. } if tool_calls[0].name == "get_weather")
    );
    assert!(
        matches!(&second[2], ChatMessage::Tool(r) if r.name == "get_weather" && r.content.starts_with("get_weather says ok"))
    );
    let Event::RunEnd {
        total_usage,
        usage,
        iteration_count,
        ..
    } = &host.events.last().unwrap().event
    else {
        panic!()
    };
    assert!(total_usage.unwrap().total_tokens > usage.unwrap().total_tokens);
    assert_eq!(*iteration_count, Some(2));
}

#[test]
fn parallel_tools_run_together_and_answer_in_call_order() {
    let mut run = started(
        Config::default(),
        tools(false),
        Session::default(),
        &start("Weather and stocks"),
    );
    let mut host = Host {
        streams: [PARALLEL, TEXT].into(),
        reverse_results: true,
        ..Host::default()
    };
    host.drive(&mut run);
    let starts = host.kinds().iter().filter(|k| **k == "tool_start").count();
    assert!(starts >= 2, "parallel fixture has several calls");
    // Every tool_start comes before the first tool_end: they were all started at once.
    let kinds = host.kinds();
    let first_end = kinds.iter().position(|k| *k == "tool_end").unwrap();
    assert_eq!(
        kinds[..first_end]
            .iter()
            .filter(|k| **k == "tool_start")
            .count(),
        starts
    );
    // The history lists results in the order of the calls, whatever order they finished in.
    let second = &host.requests[1].messages;
    let ChatMessage::Assistant { tool_calls, .. } = &second[1] else {
        panic!()
    };
    let result_ids: Vec<&str> = second[2..]
        .iter()
        .map(|m| match m {
            ChatMessage::Tool(r) => r.call_id.as_str(),
            _ => panic!("expected tool results"),
        })
        .collect();
    let call_ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(result_ids, call_ids);
    assert!(host.finished);
}
