use super::*;

/// An event from its JSON line, as the session holds it (in run `r`).
fn ev(json: &str) -> Sequenced {
    let mut ev: Sequenced = serde_json::from_str(json).expect(json);
    ev.envelope.run_id = Some("r".into());
    ev
}

/// What the session hands the log for an event: its line as `publish` makes it, and its delta.
fn logged(ev: &Sequenced) -> Logged {
    Logged {
        run_id: "r".into(),
        event_id: ev.envelope.event_id.unwrap(),
        json: serde_json::to_string(ev).unwrap(),
        delta: Delta::of(ev),
    }
}

const ENV: &str = r#""session_id":"sess-1","node_id":"run-llm-1""#;

fn chunk(id: u64, text: &str) -> Sequenced {
    let text = serde_json::to_string(text).unwrap();
    ev(&format!(
        r#"{{"type":"message_chunk","content":{text},"id":"msg-1",{ENV},"event_id":{id}}}"#
    ))
}

/// A turn as the engine streams it: a run start, pieces of text (some of every kind, some
/// with text that needs escaping or cannot be a record), the complete response and the end,
/// both carrying the whole text again.
fn turn() -> Vec<Sequenced> {
    let mut events = vec![
        ev(&format!(
            r#"{{"type":"run_start","run_id":"r","message":"long reply 50","agent":"react",{ENV},"event_id":1}}"#
        )),
        ev(&format!(
            r#"{{"type":"node_enter","id":"think",{ENV},"event_id":2}}"#
        )),
        ev(&format!(
            r#"{{"type":"reasoning_chunk","content":"let me see","id":"rs-1",{ENV},"event_id":3}}"#
        )),
    ];
    let mut text = String::new();
    for n in 0..50u64 {
        let piece = match n {
            7 => "a \"quoted\"\nline\\ ".to_string(),
            11 => "ünïcode ✓ ".to_string(),
            20 => String::new(),
            _ => format!("word{n} "),
        };
        text.push_str(&piece);
        events.push(chunk(4 + n, &piece));
    }
    let tool = |id: u64, delta: &str| {
        ev(&format!(
            r#"{{"type":"tool_call_chunk","call_id":"call-1","name":"read_file","arguments_delta":"{delta}",{ENV},"event_id":{id}}}"#
        ))
    };
    events.push(tool(54, r#"{\"path\""#));
    events.push(tool(55, r#":\"a.md\"}"#));
    let text = serde_json::to_string(&text).unwrap();
    events.push(ev(&format!(
        r#"{{"type":"llm_complete","content":{text},"tool_calls":[],"finish_reason":"stop",{ENV},"event_id":56}}"#
    )));
    events.push(ev(&format!(
        r#"{{"type":"usage","prompt_tokens":12,"completion_tokens":50,"total_tokens":62,{ENV},"event_id":57}}"#
    )));
    events.push(ev(&format!(
        r#"{{"type":"run_end","reply":{text},"session_id":"sess-1","event_id":58}}"#
    )));
    events
}

/// The rows `publish` writes for `events`: pieces gather up to 16, and any other event is
/// written with the pieces before it.
fn rows_of(events: &[Sequenced]) -> Vec<Vec<Logged>> {
    let mut rows = vec![];
    let mut row = vec![];
    for ev in events {
        row.push(logged(ev));
        if !ev.event.is_delta() || row.len() == 16 {
            rows.push(std::mem::take(&mut row));
        }
    }
    if !row.is_empty() {
        rows.push(row);
    }
    rows
}

/// Writes `rows` as the store does, one memory carried from row to row (`forget`: the writer
/// loses it before these rows, as a restart does); the stored rows.
fn write(rows: &[Vec<Logged>], forget: &[usize]) -> Vec<Stored> {
    let mut memory = Memory::default();
    let mut stored = vec![];
    for (n, row) in rows.iter().enumerate() {
        if forget.contains(&n) {
            memory = Memory::default();
        }
        let (body, after) = encode(row, &memory);
        memory = after;
        let last = row.last().unwrap().event_id;
        stored.push(Stored::Batch { last, body });
    }
    stored
}

fn lines(events: &[Sequenced]) -> Vec<String> {
    events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect()
}

#[test]
fn a_run_reads_back_line_for_line() {
    let events = turn();
    let rows = rows_of(&events);
    assert!(rows.len() >= 5, "{} rows", rows.len());
    let read = read_run(write(&rows, &[])).unwrap();
    assert_eq!(read, lines(&events));
}

#[test]
fn a_writer_that_lost_its_memory_writes_rows_that_read_back_alike() {
    let events = turn();
    let rows = rows_of(&events);
    for forget in 1..rows.len() {
        let read = read_run(write(&rows, &[forget])).unwrap();
        assert_eq!(read, lines(&events), "memory lost before row {forget}");
    }
}

#[test]
fn a_paced_row_is_its_pieces_text() {
    let events: Vec<Sequenced> = (1..=32).map(|n| chunk(n, "word ")).collect();
    let rows = rows_of(&events);
    let stored = write(&rows, &[]);
    let [Stored::Batch { body: first, .. }, Stored::Batch { body: second, .. }] = &stored[..]
    else {
        panic!("{stored:?}");
    };
    // The first row says the shape once; the next carries it over.
    assert!(first.starts_with(SHAPE), "{first:?}");
    assert_eq!(first.matches(SHAPE).count(), 1);
    assert_eq!(*second, ["word "; 16].join(&RS.to_string()));
    // ~150 bytes of JSON each, against their 5 characters and a separator.
    let json: usize = lines(&events[16..]).iter().map(String::len).sum();
    assert!(json > 16 * 100, "{json}");
    assert_eq!(second.len(), 16 * 6 - 1);
    assert_eq!(read_run(stored).unwrap(), lines(&events));
}

#[test]
fn the_text_a_response_streamed_is_not_written_again() {
    let events = turn();
    let stored = write(&rows_of(&events), &[]);
    let last_rows: String = stored[stored.len() - 3..]
        .iter()
        .map(|s| match s {
            Stored::Batch { body, .. } => body.clone(),
            Stored::Lines { .. } => unreachable!(),
        })
        .collect();
    assert!(last_rows.contains("\"type\":\"llm_complete\""));
    assert!(last_rows.contains("\"type\":\"run_end\""));
    assert!(!last_rows.contains("word0 "), "{last_rows:?}");
    assert_eq!(last_rows.matches(CUT).count(), 2);
    // Only text written as pieces is cut: a piece kept as its line (it holds a marker) ends
    // what a cut may span, and the lines still read back whole.
    let mut marked = turn();
    marked[10] = chunk(11, "with\u{1e}marker ");
    let mut whole = String::new();
    for e in &marked {
        if let Event::MessageChunk { content, .. } = &e.event {
            whole.push_str(content);
        }
    }
    let quoted = serde_json::to_string(&whole).unwrap();
    for e in marked.iter_mut() {
        if let Event::LlmComplete { content, .. } = &mut e.event {
            content.clone_from(&whole);
        }
        if let Event::RunEnd { reply, .. } = &mut e.event {
            reply.clone_from(&whole);
        }
    }
    assert!(lines(&marked).iter().any(|l| l.contains(&quoted)));
    assert_eq!(
        read_run(write(&rows_of(&marked), &[])).unwrap(),
        lines(&marked)
    );
}

#[test]
fn rows_of_the_layout_before_read_alongside() {
    // A run resumed across the upgrade: its first rows as `event_log` held them (the lines
    // joined by newlines, keyed by the last id, as append_events wrote them before
    // `event_batches`), the rest in this module's form.
    let events = turn();
    let all = lines(&events);
    let old: Vec<Stored> = rows_of(&events[..20])
        .iter()
        .map(|row| Stored::Lines {
            last: row.last().unwrap().event_id,
            json: row
                .iter()
                .map(|l| l.json.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        })
        .collect();
    let new = write(&rows_of(&events[20..]), &[]);
    // In whatever order the two tables are read.
    let mut stored = new.clone();
    stored.extend(old.clone());
    assert_eq!(read_run(stored).unwrap(), all);
    // A run all in the old layout, a row of one event (`events`) among them.
    let mut only_old = old;
    only_old.push(Stored::Lines {
        last: 21,
        json: all[20].clone(),
    });
    assert_eq!(read_run(only_old).unwrap(), all[..21]);
}

#[test]
fn a_row_that_does_not_read_is_an_error() {
    let text_first = Stored::Batch {
        last: 3,
        body: "a\u{1e}b".into(),
    };
    assert!(read_run(vec![text_first])
        .unwrap_err()
        .contains("before any shape"));
    let too_many = Stored::Batch {
        last: 1,
        body: "\u{1c}{}\u{1e}\u{1c}{}\u{1e}\u{1c}{}".into(),
    };
    assert!(read_run(vec![too_many]).is_err());
    for cut in [
        "\u{1f}1 2\u{1c}{}",
        "\u{1f}1 2 99\u{1c}{}",
        "\u{1f}x 2 0\u{1c}{}",
    ] {
        let row = Stored::Batch {
            last: 1,
            body: cut.into(),
        };
        assert!(
            read_run(vec![row]).unwrap_err().contains("cut record"),
            "{cut:?}"
        );
    }
    let shape = Stored::Batch {
        last: 1,
        body: "\u{1d}{\"type\":\"message_chunk\"}\u{1e}x".into(),
    };
    assert!(read_run(vec![shape]).unwrap_err().contains("shape"));
}

/// The rows of `stored` that [`message_text`] is given for `from..=to`, as the store selects
/// them: from the first whose last id reaches `from` to the first whose last id reaches `to`.
fn rows_holding(stored: &[Stored], from: u64, to: u64) -> Vec<(u64, String)> {
    let mut out = vec![];
    for row in stored {
        let Stored::Batch { last, body } = row else {
            unreachable!()
        };
        if *last >= from {
            out.push((*last, body.clone()));
            if *last >= to {
                break;
            }
        }
    }
    out
}

/// The memory a writer has after `rows`, as [`write`] carries it.
fn memory_after(rows: &[Vec<Logged>], forget: &[usize]) -> Memory {
    let mut memory = Memory::default();
    for (n, row) in rows.iter().enumerate() {
        if forget.contains(&n) {
            memory = Memory::default();
        }
        memory = encode(row, &memory).1;
    }
    memory
}

/// The text of the message pieces of `events`.
fn message_of(events: &[Sequenced]) -> String {
    let mut text = String::new();
    for e in events {
        if let Event::MessageChunk { content, .. } = &e.event {
            text.push_str(content);
        }
    }
    text
}

#[test]
fn a_reply_is_read_back_from_the_rows_that_hold_its_pieces() {
    let events = turn();
    let rows = rows_of(&events);
    // A writer that lost its memory holds the text from the first piece it wrote after.
    for (forget, first) in [(vec![], 4), (vec![2], 4), (vec![3], 19), (vec![4], 35)] {
        let text = message_of(&events[first as usize - 1..]);
        let memory = memory_after(&rows, &forget);
        let (from, to) = memory.message_holding(&text).expect("the reply's pieces");
        assert_eq!((from, to), (first, 53));
        let stored = write(&rows, &forget);
        let holding = rows_holding(&stored, from, to);
        assert!(holding.len() < stored.len(), "only the rows that hold it");
        assert_eq!(message_text(&holding, from, to).unwrap(), text);
    }
    let memory = memory_after(&rows, &[3]);
    assert_eq!(memory.message_holding(&message_of(&events)), None);
    assert_eq!(memory.message_holding("other text"), None);
}

#[test]
fn a_reply_read_from_the_log_leaves_out_what_streamed_between_its_pieces() {
    // Reasoning pieces between the reply's, each switching the shape: the reply's range spans
    // them, and only its own pieces are its text.
    let reasoning = |id: u64| {
        ev(&format!(
            r#"{{"type":"reasoning_chunk","content":"hmm ","id":"rs-1",{ENV},"event_id":{id}}}"#
        ))
    };
    let mut events = vec![];
    for n in 1..=40u64 {
        events.push(if (10..15).contains(&n) || n == 30 {
            reasoning(n)
        } else {
            chunk(n, &format!("w{n} "))
        });
    }
    let text = message_of(&events);
    let rows = rows_of(&events);
    let (from, to) = memory_after(&rows, &[]).message_holding(&text).unwrap();
    assert_eq!((from, to), (1, 40));
    let stored = write(&rows, &[]);
    assert_eq!(
        message_text(&rows_holding(&stored, from, to), from, to).unwrap(),
        text
    );
    // From the middle on (a writer that lost its memory starts its range afresh).
    let (from, to) = memory_after(&rows, &[1])
        .message_holding(&message_of(&events[16..]))
        .unwrap();
    assert_eq!((from, to), (17, 40));
    let stored = write(&rows, &[1]);
    assert_eq!(
        message_text(&rows_holding(&stored, from, to), from, to).unwrap(),
        message_of(&events[16..])
    );
}

#[test]
fn a_reply_with_a_piece_kept_as_its_line_is_not_pointed_at_whole() {
    let mut events = turn();
    events[10] = chunk(11, "with\u{1e}marker ");
    let memory = memory_after(&rows_of(&events), &[]);
    assert_eq!(memory.message_holding(&message_of(&events)), None);
    // What it holds is the text after that piece, which reads back.
    let after = message_of(&events[11..]);
    let (from, to) = memory.message_holding(&after).unwrap();
    let stored = write(&rows_of(&events), &[]);
    assert_eq!(
        message_text(&rows_holding(&stored, from, to), from, to).unwrap(),
        after
    );
}
