//! The usage example of the README, kept compiling and true.

use weft_protocol::{Command, Dialect, Encoder, Event, Limits, Reassembler, Sequencer};

#[test]
fn readme_example() -> Result<(), weft_protocol::Error> {
    let cmd =
        Dialect::Cueso.decode_request(br#"{"message":"What time is it?"}"#, Limits::default())?;
    assert!(matches!(cmd, Command::Run(_)));

    let mut seq = Sequencer::new(Some("sess-1".into()), "run-1");
    let mut enc = Encoder::new(Dialect::Cueso, 0x5eed);
    let frames = enc.encode(&seq.stamp(Event::MessageChunk {
        content: "It is".into(),
        id: "think".into(),
    }));

    let mut r = Reassembler::new(Dialect::Cueso);
    for f in &frames {
        r.push_frame(f.as_bytes())?;
    }
    assert_eq!(r.transcript().messages[0].text, "It is");
    Ok(())
}
