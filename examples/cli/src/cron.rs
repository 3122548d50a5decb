//! `kruise cron next`: the next firing times of a schedule, as the AdvancedCronJob controller computes them.
//!
//! ```text
//! kruise cron next SCHEDULE [--time-zone TZ] [--after RFC3339] [-n N]
//! kruise cron next --batch < requests.jsonl
//! ```
//!
//! `--time-zone` is the AdvancedCronJob's `spec.timeZone`: applied unless the schedule contains `TZ`, and an
//! unknown zone falls back to the controller's zone (UTC here) with a warning on standard error, as upstream
//! does. Times are printed in RFC 3339, UTC, one per line. With `--batch`, each line of standard input is a
//! JSON object `{"schedule": ..., "timeZone": ..., "after": ..., "n": ...}` (only `schedule` is required;
//! blank lines are skipped) and each answer is one JSON line, `{"times": [...]}` or `{"error": "..."}`.

use std::io::{BufRead, Write};

use chrono::{DateTime, SecondsFormat, Utc};
use kruise_schedule::cron::{Schedule, Zone};
use serde::Deserialize;

use super::CliError;

/// The most firing times one request may ask for.
const MAX_COUNT: u64 = 100_000;

/// Arguments of `kruise cron`.
#[derive(Clone, Debug, clap::Args)]
pub struct CronArgs {
    /// What to compute.
    #[command(subcommand)]
    pub command: CronCommand,
}

/// The `kruise cron` subcommands.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum CronCommand {
    /// Print the next firing times of a schedule (robfig/cron v3 `ParseStandard` semantics), RFC 3339 UTC,
    /// one per line.
    Next(NextArgs),
}

/// Arguments of `kruise cron next`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct NextArgs {
    /// Five fields (minute hour day-of-month month day-of-week) or a descriptor (`@daily`, `@every 1h`, ...),
    /// optionally prefixed with `TZ=<zone> ` or `CRON_TZ=<zone> `.
    #[arg(required_unless_present = "batch")]
    pub schedule: Option<String>,
    /// The AdvancedCronJob's spec.timeZone (an IANA name, `UTC`, or `Local` for the controller's zone, UTC).
    #[arg(long, value_name = "TZ")]
    pub time_zone: Option<String>,
    /// Start after this time (RFC 3339); now by default.
    #[arg(long, value_name = "RFC3339")]
    pub after: Option<String>,
    /// How many firing times to print.
    #[arg(short = 'n', value_name = "N", default_value_t = 1)]
    pub count: u64,
    /// Read JSON requests from standard input, one per line, and answer each with a JSON line.
    #[arg(long, conflicts_with_all = ["schedule", "time_zone", "after", "count"])]
    pub batch: bool,
}

/// Runs `kruise cron`; `now` stands in for `--after` when it is not given.
///
/// # Errors
/// Invalid flags or schedule (exit code 2), failing input or output.
pub fn run(
    args: &CronArgs,
    now: DateTime<Utc>,
    stdin: &mut impl BufRead,
    out: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<(), CliError> {
    match &args.command {
        CronCommand::Next(next) if next.batch => batch(now, stdin, out, stderr),
        CronCommand::Next(next) => single(next, now, out, stderr),
    }
}

/// The answer to one request: the times, and a warning about the time zone.
struct Answer {
    times: Vec<DateTime<Utc>>,
    warning: Option<String>,
}

fn answer(
    schedule: &str,
    time_zone: Option<&str>,
    after: Option<&str>,
    count: u64,
    now: DateTime<Utc>,
) -> Result<Answer, String> {
    if count > MAX_COUNT {
        return Err(format!(
            "n: at most {MAX_COUNT} times per request, not {count}"
        ));
    }
    let after = match after {
        Some(text) => DateTime::parse_from_rfc3339(text)
            .map_err(|error| format!("after {text:?}: not an RFC 3339 time: {error}"))?
            .with_timezone(&Utc),
        None => now,
    };
    let resolved = Schedule::parse_with_time_zone(schedule, time_zone)
        .map_err(|error| format!("schedule {schedule:?}: {error}"))?;
    let warning = resolved
        .ignored_time_zone
        .map(|unknown| format!("time zone: {unknown}; using the controller's time zone (UTC)"));
    let times = resolved
        .schedule
        .iter_after(after, Zone::UTC)
        .take(usize::try_from(count).unwrap_or(usize::MAX))
        .collect();
    Ok(Answer { times, warning })
}

fn rfc3339(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn single(
    args: &NextArgs,
    now: DateTime<Utc>,
    out: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<(), CliError> {
    let schedule = args
        .schedule
        .as_deref()
        .ok_or_else(|| CliError::Invalid("a SCHEDULE or --batch is required".into()))?;
    let answer = answer(
        schedule,
        args.time_zone.as_deref(),
        args.after.as_deref(),
        args.count,
        now,
    )
    .map_err(CliError::Invalid)?;
    if let Some(warning) = &answer.warning {
        writeln!(stderr, "warning: {warning}")?;
    }
    for time in &answer.times {
        writeln!(out, "{}", rfc3339(time))?;
    }
    if (answer.times.len() as u64) < args.count {
        let last = answer.times.last().map_or_else(
            || args.after.clone().unwrap_or_else(|| rfc3339(&now)),
            rfc3339,
        );
        writeln!(
            stderr,
            "note: no firing time after {last} within five years (robfig/cron gives up there)"
        )?;
    }
    Ok(())
}

/// One line of `--batch` input.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Request {
    schedule: String,
    #[serde(default)]
    time_zone: Option<String>,
    #[serde(default)]
    after: Option<String>,
    #[serde(default = "one")]
    n: u64,
}

fn one() -> u64 {
    1
}

fn batch(
    now: DateTime<Utc>,
    stdin: &mut impl BufRead,
    out: &mut impl Write,
    stderr: &mut impl Write,
) -> Result<(), CliError> {
    for (index, line) in stdin.lines().enumerate() {
        let line = line.map_err(|error| {
            CliError::Input(super::input::InputError::Read {
                source_name: "-".into(),
                error,
            })
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Request>(&line) {
            Err(error) => serde_json::json!({"error": format!("line {}: {error}", index + 1)}),
            Ok(request) => match answer(
                &request.schedule,
                request.time_zone.as_deref(),
                request.after.as_deref(),
                request.n,
                now,
            ) {
                Err(error) => serde_json::json!({"error": error}),
                Ok(answer) => {
                    if let Some(warning) = answer.warning {
                        writeln!(stderr, "warning: line {}: {warning}", index + 1)?;
                    }
                    let times: Vec<String> = answer.times.iter().map(rfc3339).collect();
                    serde_json::json!({"times": times})
                }
            },
        };
        writeln!(out, "{reply}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2022-09-05T09:01:00Z".parse().unwrap()
    }

    fn run_next(args: NextArgs, stdin: &str) -> (Result<(), CliError>, String, String) {
        let args = CronArgs {
            command: CronCommand::Next(args),
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let result = run(&args, now(), &mut stdin.as_bytes(), &mut out, &mut err);
        (
            result,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    fn next(schedule: &str) -> NextArgs {
        NextArgs {
            schedule: Some(schedule.into()),
            count: 1,
            ..NextArgs::default()
        }
    }

    #[test]
    fn single_schedule() {
        let (result, out, err) = run_next(
            NextArgs {
                time_zone: Some("Asia/Shanghai".into()),
                count: 3,
                ..next("0 10 * * ?")
            },
            "",
        );
        result.unwrap();
        assert_eq!(
            out,
            "2022-09-06T02:00:00Z\n2022-09-07T02:00:00Z\n2022-09-08T02:00:00Z\n"
        );
        assert_eq!(err, "");
        // --after, and the default of one time.
        let (result, out, _) = run_next(
            NextArgs {
                after: Some("2012-11-04T01:45:00-04:00".into()),
                ..next("TZ=America/New_York 30 1 * * *")
            },
            "",
        );
        result.unwrap();
        assert_eq!(out, "2012-11-04T06:30:00Z\n");
    }

    #[test]
    fn warnings_and_notes_go_to_stderr() {
        let (result, out, err) = run_next(
            NextArgs {
                time_zone: Some("Mars/Olympus".into()),
                ..next("0 10 * * *")
            },
            "",
        );
        result.unwrap();
        assert_eq!(out, "2022-09-05T10:00:00Z\n");
        assert_eq!(
            err,
            "warning: time zone: unknown time zone \"Mars/Olympus\"; using the controller's time zone (UTC)\n"
        );
        let (result, out, err) = run_next(next("0 0 30 2 *"), "");
        result.unwrap();
        assert_eq!(out, "");
        assert_eq!(
            err,
            "note: no firing time after 2022-09-05T09:01:00Z within five years (robfig/cron gives up there)\n"
        );
    }

    #[test]
    fn invalid_input_exits_2() {
        for (args, message) in [
            (
                next("0 0 * * 7"),
                "schedule \"0 0 * * 7\": day-of-week field (field 5) \"7\": end of range (7) above maximum (6)",
            ),
            (
                next("TZ=UTC"),
                "schedule \"TZ=UTC\": time zone prefix \"TZ=UTC\" must be followed by a space and the schedule",
            ),
            (
                NextArgs {
                    after: Some("yesterday".into()),
                    ..next("@daily")
                },
                "after \"yesterday\": not an RFC 3339 time: premature end of input",
            ),
            (
                NextArgs {
                    count: 100_001,
                    ..next("@daily")
                },
                "n: at most 100000 times per request, not 100001",
            ),
        ] {
            let (result, out, _) = run_next(args, "");
            let error = result.unwrap_err();
            assert_eq!(error.exit_code(), 2);
            assert_eq!(error.to_string(), message);
            assert_eq!(out, "");
        }
    }

    #[test]
    fn batch_mode() {
        let input = concat!(
            r#"{"schedule": "0 10 * * ?", "timeZone": "Asia/Shanghai", "after": "2022-09-05T09:01:00Z", "n": 2}"#,
            "\n",
            r#"{"schedule": "@every 90m"}"#,
            "\n\n",
            r#"{"schedule": "61 * * * *"}"#,
            "\n",
            r#"{"schedule": "@daily", "timezone": "UTC"}"#,
            "\n",
            "not json\n",
            r#"{"schedule": "0 0 30 2 *", "n": 3}"#,
            "\n",
            r#"{"schedule": "@hourly", "timeZone": "Nowhere/Land", "n": 0}"#,
            "\n",
        );
        let (result, out, err) = run_next(
            NextArgs {
                batch: true,
                ..NextArgs::default()
            },
            input,
        );
        result.unwrap();
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                serde_json::json!({"times": ["2022-09-06T02:00:00Z", "2022-09-07T02:00:00Z"]}),
                serde_json::json!({"times": ["2022-09-05T10:31:00Z"]}),
                serde_json::json!({"error": "schedule \"61 * * * *\": minute field (field 1) \"61\": end of range (61) above maximum (59)"}),
                serde_json::json!({"error": "line 5: unknown field `timezone`, expected one of `schedule`, `timeZone`, `after`, `n` at line 1 column 33"}),
                serde_json::json!({"error": "line 6: expected ident at line 1 column 2"}),
                serde_json::json!({"times": []}),
                serde_json::json!({"times": []}),
            ]
        );
        assert_eq!(
            err,
            "warning: line 8: time zone: unknown time zone \"Nowhere/Land\"; using the controller's time zone (UTC)\n"
        );
    }
}
