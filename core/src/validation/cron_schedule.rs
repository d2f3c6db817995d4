//! A CronJob's `schedule` read as upstream reads it (robfig/cron's standard parser:
//! five fields, names for months and weekdays, `@hourly`-style descriptors, an optional
//! `TZ=`/`CRON_TZ=` prefix), refused with that parser's words.

use super::time_zones;

/// The range one field may take, and the names it accepts for numbers.
#[derive(Debug)]
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DAYS_OF_MONTH: Bounds = Bounds { min: 1, max: 31, names: &[] };
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1), ("feb", 2), ("mar", 3), ("apr", 4), ("may", 5), ("jun", 6),
        ("jul", 7), ("aug", 8), ("sep", 9), ("oct", 10), ("nov", 11), ("dec", 12),
    ],
};
const DAYS_OF_WEEK: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[("sun", 0), ("mon", 1), ("tue", 2), ("wed", 3), ("thu", 4), ("fri", 5), ("sat", 6)],
};

const DESCRIPTORS: [&str; 7] = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"];

/// Why `spec` is not a schedule, if it is not.
pub fn parse(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').unwrap_or(0);
        let space = spec.find(' ').unwrap_or(spec.len());
        let zone = spec.get(eq + 1..space).unwrap_or("");
        if let Err(why) = time_zones::load(zone) {
            return Err(format!("provided bad location {zone}: {why}"));
        }
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    for (field, bounds) in fields.iter().zip([MINUTES, HOURS, DAYS_OF_MONTH, MONTHS, DAYS_OF_WEEK]) {
        for expr in field.split(',') {
            range(expr, &bounds)?;
        }
    }
    Ok(())
}

fn descriptor(spec: &str) -> Result<(), String> {
    if DESCRIPTORS.contains(&spec) {
        return Ok(());
    }
    if let Some(every) = spec.strip_prefix("@every ") {
        return crate::duration::parse_duration(every)
            .map(|_| ())
            .map_err(|e| format!("failed to parse duration {spec}: time: {e}"));
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// One `a`, `a-b`, `*`, `?`, each with an optional `/step`.
fn range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(low_and_high[0], bounds)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], bounds)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = int(range_and_step[1])?;
            // `N/step` runs from N to the end.
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): {expr}", bounds.min));
    }
    if end > bounds.max {
        return Err(format!("end of range ({end}) above maximum ({}): {expr}", bounds.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn int_or_name(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    match bounds.names.iter().find(|(name, _)| *name == lower) {
        Some((_, n)) => Ok(*n),
        None => int(expr),
    }
}

/// A non-negative decimal, in Go's `strconv.Atoi` words when it is not one.
fn int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    let why = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        "invalid syntax"
    } else {
        match expr.parse::<i64>() {
            Ok(n) if n < 0 => return Err(format!("negative number ({n}) not allowed: {expr}")),
            Ok(n) => return Ok(n as u64),
            Err(_) => "value out of range",
        }
    };
    Err(format!("failed to parse int from {expr}: strconv.Atoi: parsing {}: {why}", crate::schema::go_quote(expr)))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn schedules_as_robfig_cron_reads_them() {
        for ok in ["0 * * * *", "*/5 1-3 ? JAN-mar mon,fri", "@hourly", "@every 1h30m", "CRON_TZ=UTC 0 0 * * *", "5/15 * * * *"] {
            assert_eq!(parse(ok), Ok(()), "{ok}");
        }
        let refused = [
            ("every minute", "expected exactly 5 fields, found 2: [every minute]"),
            ("61 * * * *", "end of range (61) above maximum (59): 61"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
            ("*/0 * * * *", "step of range should be a positive number: */0"),
            ("x * * * *", "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("@sometimes", "unrecognized descriptor: @sometimes"),
            ("", "empty spec string"),
            ("TZ=Mars/Olympus 0 * * * *", "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"),
        ];
        for (spec, why) in refused {
            assert_eq!(parse(spec), Err(why.to_owned()), "{spec}");
        }
    }
}
