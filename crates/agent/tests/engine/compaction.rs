//! Compaction, at the threshold and by hand.

use super::*;

#[test]
fn threshold_compaction_summarises_older_turns_first() {
    let mut session = Session::default();
    for i in 0..6 {
        session.history.push(ChatMessage::user(format!(
            "question {i}: {}",
            "lorem ipsum ".repeat(40)
        )));
        session
            .history
            .push(ChatMessage::assistant(format!("answer {i}")));
    }
    let config = Config {
        context_window: 1000,
        ..Config::default()
    };
    let mut run = started(config, tools(false), session, &start("And now?"));
    let mut host = Host {
        streams: [TEXT, TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(
        collapse(host.kinds())[..3],
        ["run_start", "context_compacted", "node_enter"]
    );
    let Event::ContextCompacted {
        old_token_count,
        new_token_count,
        strategy,
        ..
    } = &host.events[1].event
    else {
        panic!()
    };
    assert!(new_token_count < old_token_count);
    assert_eq!(strategy, "ThresholdContextManager");
    // The summary request offered no tools; the summary stays in the history, the recent turns too.
    assert!(host.requests[0].tools.is_empty());
    let history = &run.session().history;
    assert!(
        matches!(&history[0], ChatMessage::User { content } if content.starts_with("Summary of the earlier conversation:"))
    );
    assert_eq!(history[history.len() - 2], ChatMessage::user("And now?"));
    assert!(history.len() <= 7);
}

#[test]
fn manual_compaction_and_the_empty_transcript() {
    let mut empty = Run::compact(
        Config::default(),
        tools(false),
        Session::default(),
        "sess-1",
        "compact-1",
    );
    let mut host = Host::default();
    host.drive(&mut empty);
    assert_eq!(host.kinds(), ["error"]);
    assert!(
        matches!(&host.events[0].event, Event::Error { message, .. } if message == "Cannot compact empty transcript")
    );

    let session = Session {
        history: vec![ChatMessage::user("hi"), ChatMessage::assistant("hello")],
        ..Session::default()
    };
    let mut run = Run::compact(
        Config::default(),
        tools(false),
        session,
        "sess-1",
        "compact-2",
    );
    let mut host = Host {
        streams: [TEXT].into(),
        ..Host::default()
    };
    host.drive(&mut run);
    assert_eq!(host.kinds(), ["context_compacted"]);
    assert_eq!(run.session().history.len(), 1);
    assert!(host.finished);
}
