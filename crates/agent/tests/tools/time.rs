//! get_time and the time formatting behind it.

use super::*;

#[test]
fn get_time_defaults_to_utc_with_the_weekday() {
    let mut host = Host::new();
    assert_eq!(
        host.ok("get_time", json!({})),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
    assert_eq!(
        host.ok("get_time", Value::Null),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": " "})),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": null})),
        "2024-02-29T13:45:30Z (Thursday, UTC)"
    );
}

#[test]
fn get_time_understands_fixed_offsets_and_names_the_local_weekday() {
    let mut host = Host::new();
    assert_eq!(
        host.ok("get_time", json!({"timezone": "+05:30"})),
        "2024-02-29T19:15:30+05:30 (Thursday, +05:30)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": "UTC+11"})),
        "2024-03-01T00:45:30+11:00 (Friday, UTC+11)"
    );
    assert_eq!(
        host.ok("get_time", json!({"timezone": "UTC-3"})),
        "2024-02-29T10:45:30-03:00 (Thursday, UTC-3)"
    );
    assert_eq!(
        host.err("get_time", json!({"timezone": "Europe/Paris"})),
        "unknown timezone: Europe/Paris"
    );
}

#[test]
fn get_time_uses_the_hosts_formatter() {
    let mut host = IntlHost(Host::new());
    let ToolRun::Done { result, is_error } =
        run_builtin("get_time", &json!({"timezone": "Europe/Paris"}), &mut host)
    else {
        panic!("not done")
    };
    assert!(!is_error);
    assert_eq!(result, "2024-02-29T14:45:30+01:00 (Thursday, Europe/Paris)");
}

#[test]
fn format_time_offset_forms() {
    let t = |zone: &str| format_time_offset(NOW, zone);
    for utc in [
        "UTC", "utc", "GMT", "Z", "Etc/UTC", "etc/gmt", "Zulu", "", "+00:00", "-0",
    ] {
        assert_eq!(t(utc).as_deref(), Ok("2024-02-29T13:45:30Z"), "{utc:?}");
    }
    assert_eq!(t("+0530").as_deref(), Ok("2024-02-29T19:15:30+05:30"));
    assert_eq!(t("+5:30").as_deref(), Ok("2024-02-29T19:15:30+05:30"));
    assert_eq!(t("-09:30").as_deref(), Ok("2024-02-29T04:15:30-09:30"));
    assert_eq!(t("GMT+2").as_deref(), Ok("2024-02-29T15:45:30+02:00"));
    assert_eq!(t("utc-12").as_deref(), Ok("2024-02-29T01:45:30-12:00"));
    assert_eq!(t("+14").as_deref(), Ok("2024-03-01T03:45:30+14:00"));
    // POSIX sign inversion of the Etc/GMT zones.
    assert_eq!(t("Etc/GMT+3").as_deref(), Ok("2024-02-29T10:45:30-03:00"));
    assert_eq!(t("Etc/GMT-14").as_deref(), Ok("2024-03-01T03:45:30+14:00"));
    for bad in [
        "Europe/Paris",
        "5",
        "+5:3",
        "+05:60",
        "+19",
        "+123",
        "UTC+",
        "+aa",
        "Etc/GMT+15",
        "Etc/GMT+1:30",
        "Mars/Olympus",
    ] {
        assert_eq!(t(bad), Err(format!("unknown timezone: {bad}")), "{bad:?}");
    }
}

#[test]
fn format_time_offset_dates_across_eras() {
    assert_eq!(
        format_time_offset(0, "UTC").as_deref(),
        Ok("1970-01-01T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(-1, "UTC").as_deref(),
        Ok("1969-12-31T23:59:59Z")
    );
    assert_eq!(
        format_time_offset(951_782_400_000, "UTC").as_deref(),
        Ok("2000-02-29T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(4_107_542_399_000, "UTC").as_deref(),
        Ok("2100-02-28T23:59:59Z")
    );
    assert_eq!(
        format_time_offset(4_107_542_400_000, "UTC").as_deref(),
        Ok("2100-03-01T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(-62_167_219_200_000, "UTC").as_deref(),
        Ok("0000-01-01T00:00:00Z")
    );
    assert_eq!(
        format_time_offset(253_402_300_799_000, "UTC").as_deref(),
        Ok("9999-12-31T23:59:59Z")
    );
    let out_of_range = Err("the time is out of range".to_string());
    assert_eq!(format_time_offset(253_402_300_800_000, "UTC"), out_of_range);
    assert_eq!(format_time_offset(i64::MAX, "+01:00"), out_of_range);
    assert_eq!(format_time_offset(i64::MIN, "UTC"), out_of_range);
}

#[test]
fn get_time_weekdays() {
    let mut host = Host::new();
    for (ms, expected) in [
        (0, "1970-01-01T00:00:00Z (Thursday, UTC)"),
        (-86_400_000, "1969-12-31T00:00:00Z (Wednesday, UTC)"),
        (951_782_400_000, "2000-02-29T00:00:00Z (Tuesday, UTC)"),
        (1_704_067_200_000, "2024-01-01T00:00:00Z (Monday, UTC)"),
        (1_735_603_200_000, "2024-12-31T00:00:00Z (Tuesday, UTC)"),
    ] {
        host.now = ms;
        assert_eq!(host.ok("get_time", json!({})), expected);
    }
    host.now = i64::MAX;
    assert_eq!(host.err("get_time", json!({})), "the time is out of range");
}
