//! `get_time`, and the time formatting a host without a time-zone database falls back to.

use super::args::Args;
use super::ToolHost;

/// The largest UTC offset accepted, in minutes (±18:00, the bound ISO 8601 software commonly
/// uses; real zones span −12:00 to +14:00).
const MAX_OFFSET_MINUTES: i64 = 18 * 60;

const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// `now_ms` (milliseconds since the Unix epoch) as an RFC 3339 timestamp, to the second, in
/// UTC or at a fixed offset: the default of [`ToolHost::format_time`].
///
/// Understood: `UTC`, `GMT`, `Z`, `Etc/UTC`, `Etc/GMT` (any case); offsets `+05:30`, `+0530`,
/// `-3`, optionally after `UTC`/`GMT` (`UTC-3`, `GMT+5:30`); and the IANA `Etc/GMT±N` zones,
/// whose sign is inverted by POSIX convention (`Etc/GMT+3` is UTC−03:00). Anything else is
/// `Err("unknown timezone: NAME")`. UTC is written `Z`: `2024-02-29T13:45:30Z`,
/// `2024-02-29T19:15:30+05:30`.
pub fn format_time_offset(now_ms: i64, timezone: &str) -> Result<String, String> {
    let offset = parse_zone(timezone.trim())
        .ok_or_else(|| format!("unknown timezone: {}", timezone.trim()))?;
    let local_ms = now_ms
        .checked_add(offset * 60_000)
        .ok_or("the time is out of range")?;
    let secs = local_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let second_of_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return Err("the time is out of range".to_string());
    }
    let zone = if offset == 0 {
        "Z".to_string()
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        format!("{sign}{:02}:{:02}", offset.abs() / 60, offset.abs() % 60)
    };
    Ok(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{zone}",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    ))
}

/// The offset from UTC in minutes of a zone [`format_time_offset`] understands.
fn parse_zone(zone: &str) -> Option<i64> {
    let lower = zone.to_ascii_lowercase();
    match lower.as_str() {
        "" | "utc" | "gmt" | "z" | "zulu" | "universal" | "etc/utc" | "etc/gmt"
        | "etc/universal" | "etc/zulu" => return Some(0),
        _ => {}
    }
    if let Some(rest) = lower.strip_prefix("etc/gmt") {
        // POSIX-style: Etc/GMT+3 is three hours *behind* UTC. Whole hours only.
        let (sign, digits) = split_sign(rest)?;
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let hours: i64 = digits.parse().ok()?;
        return (hours <= 14).then_some(-sign * hours * 60);
    }
    let rest = lower
        .strip_prefix("utc")
        .or_else(|| lower.strip_prefix("gmt"))
        .unwrap_or(&lower);
    let (sign, digits) = split_sign(rest)?;
    let (hours, minutes) = match digits.split_once(':') {
        Some((h, m)) if (1..=2).contains(&h.len()) && m.len() == 2 => (h, m),
        Some(_) => return None,
        None if (1..=2).contains(&digits.len()) => (digits, "0"),
        None if digits.len() == 4 => digits.split_at(2),
        None => return None,
    };
    if !hours
        .bytes()
        .chain(minutes.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (hours, minutes): (i64, i64) = (hours.parse().ok()?, minutes.parse().ok()?);
    let total = hours * 60 + minutes;
    (minutes < 60 && total <= MAX_OFFSET_MINUTES).then_some(sign * total)
}

/// `+5` → `(1, "5")`; no sign → `None`.
fn split_sign(s: &str) -> Option<(i64, &str)> {
    if let Some(rest) = s.strip_prefix('+') {
        Some((1, rest))
    } else {
        s.strip_prefix('-').map(|rest| (-1, rest))
    }
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (day 0), by the
/// era/year-of-era decomposition: 400-year eras of 146 097 days, years starting in March so
/// the leap day comes last.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = year - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The weekday of a timestamp that starts with `YYYY-MM-DD`, whatever zone it is in: the
/// host's formatter may not give one, and models get weekdays wrong when they work them out.
fn weekday(timestamp: &str) -> Option<&'static str> {
    let date = timestamp.get(..10)?;
    let mut parts = date.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    WEEKDAYS
        .get(usize::try_from((days + 4).rem_euclid(7)).ok()?)
        .copied()
}

/// `get_time { timezone? }`: `2024-02-29T13:45:30Z (Thursday, UTC)`.
pub(crate) fn run(args: &Args<'_>, host: &mut dyn ToolHost) -> Result<String, String> {
    let zone = match args.opt_str("timezone")?.map(str::trim) {
        None | Some("") => "UTC",
        Some(zone) => zone,
    };
    let time = host.format_time(host.now_ms(), zone)?;
    Ok(match weekday(&time) {
        Some(day) => format!("{time} ({day}, {zone})"),
        None => format!("{time} ({zone})"),
    })
}
