//! The standard Prometheus process metrics (as every Go client exports them, so the usual dashboards and
//! alerts work unchanged), read from `/proc/self` at each scrape:
//!
//! | metric | type |
//! |---|---|
//! | `process_cpu_seconds_total` | counter: user and system CPU time of all threads |
//! | `process_resident_memory_bytes` | gauge |
//! | `process_virtual_memory_bytes` | gauge |
//! | `process_open_fds` | gauge |
//! | `process_max_fds` | gauge: the soft limit |
//! | `process_start_time_seconds` | gauge: Unix time |
//!
//! Where `/proc` is missing (not Linux), or a file does not parse, the metrics it gives are left out of that
//! scrape; nothing fails.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

/// Clock ticks per second of the times in `/proc/<pid>/stat` (Linux's `USER_HZ`, 100 on every
/// architecture it exports to user space).
const TICKS_PER_SECOND: f64 = 100.0;

/// What `/proc/self/stat` says about the process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessTimes {
    /// User plus system CPU time, in seconds.
    pub cpu_seconds: f64,
    /// When the process started, in clock ticks after boot.
    pub start_ticks: u64,
}

/// Reads the CPU time and start time from the text of `/proc/<pid>/stat`. The command name (field 2) is
/// in parentheses and may hold spaces or parentheses itself, so the fields are counted after its last `)`.
#[must_use]
pub fn parse_stat(stat: &str) -> Option<ProcessTimes> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields from 3 (state) on; utime and stime are fields 14 and 15, starttime is field 22.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |number: usize| -> Option<u64> { fields.get(number - 3)?.parse().ok() };
    let ticks = field(14)?.checked_add(field(15)?)?;
    Some(ProcessTimes {
        cpu_seconds: ticks as f64 / TICKS_PER_SECOND,
        start_ticks: field(22)?,
    })
}

/// The boot time (`btime`, Unix seconds) from the text of `/proc/stat`.
#[must_use]
pub fn parse_boot_time(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|value| value.trim().parse().ok())
}

/// A `kB` value of `/proc/<pid>/status` (`VmRSS`, `VmSize`), in bytes.
#[must_use]
pub fn parse_status_bytes(status: &str, key: &str) -> Option<u64> {
    let value = status.lines().find_map(|line| {
        line.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
    })?;
    let kilobytes: u64 = value.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kilobytes.checked_mul(1024)
}

/// The soft limit of open files from the text of `/proc/<pid>/limits` (`None` when unlimited).
#[must_use]
pub fn parse_max_open_files(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The process metrics, read at each scrape.
#[derive(Debug, Default)]
pub struct ProcessCollector;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

impl ProcessCollector {
    fn gauge(
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        unit: Option<&Unit>,
        value: f64,
    ) -> Result<(), std::fmt::Error> {
        let gauge = ConstGauge::new(value);
        let metric = encoder.encode_descriptor(name, help, unit, gauge.metric_type())?;
        gauge.encode(metric)
    }
}

// Precision: the values are byte, file and second counts far below 2^52.
#[allow(clippy::cast_precision_loss)]
impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let times = read("/proc/self/stat").and_then(|stat| parse_stat(&stat));
        if let Some(times) = times {
            let cpu = ConstCounter::new(times.cpu_seconds);
            let metric = encoder.encode_descriptor(
                "process_cpu",
                "Total user and system CPU time spent in seconds.",
                Some(&Unit::Seconds),
                cpu.metric_type(),
            )?;
            cpu.encode(metric)?;
            if let Some(boot) = read("/proc/stat").and_then(|stat| parse_boot_time(&stat)) {
                let started = boot as f64 + times.start_ticks as f64 / TICKS_PER_SECOND;
                Self::gauge(
                    &mut encoder,
                    "process_start_time",
                    "Start time of the process since unix epoch in seconds.",
                    Some(&Unit::Seconds),
                    started,
                )?;
            }
        }
        if let Some(status) = read("/proc/self/status") {
            for (key, name, help) in [
                (
                    "VmRSS",
                    "process_resident_memory",
                    "Resident memory size in bytes.",
                ),
                (
                    "VmSize",
                    "process_virtual_memory",
                    "Virtual memory size in bytes.",
                ),
            ] {
                if let Some(bytes) = parse_status_bytes(&status, key) {
                    Self::gauge(&mut encoder, name, help, Some(&Unit::Bytes), bytes as f64)?;
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
            Self::gauge(
                &mut encoder,
                "process_open_fds",
                "Number of open file descriptors.",
                None,
                entries.count() as f64,
            )?;
        }
        if let Some(max) =
            read("/proc/self/limits").and_then(|limits| parse_max_open_files(&limits))
        {
            Self::gauge(
                &mut encoder,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                None,
                max as f64,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        // A command name with a space and a parenthesis in it; utime 250, stime 50, starttime 12345.
        let stat = "4242 (kruise (mgr) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 9 0 \
                    12345 1000000 2000 18446744073709551615";
        assert_eq!(
            parse_stat(stat),
            Some(ProcessTimes {
                cpu_seconds: 3.0,
                start_ticks: 12345
            })
        );
        assert_eq!(parse_stat("4242 (cut short) S 1 2"), None);
        assert_eq!(parse_stat("no parenthesis at all"), None);
    }

    #[test]
    fn boot_time_memory_and_fd_limit_are_read_from_their_files() {
        assert_eq!(
            parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"),
            Some(1_700_000_000)
        );
        assert_eq!(parse_boot_time("cpu 1\n"), None);
        let status =
            "Name:\tkruise-manager\nVmSize:\t  123456 kB\nVmRSS:\t   61440 kB\nThreads:\t9\n";
        assert_eq!(parse_status_bytes(status, "VmRSS"), Some(61_440 * 1024));
        assert_eq!(parse_status_bytes(status, "VmSize"), Some(123_456 * 1024));
        assert_eq!(parse_status_bytes(status, "VmSwap"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max cpu time              unlimited            unlimited            seconds\n\
                      Max open files            1048576              1048576              files\n";
        assert_eq!(parse_max_open_files(limits), Some(1_048_576));
        assert_eq!(
            parse_max_open_files(
                "Max open files            unlimited            unlimited            files\n"
            ),
            None
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_described() {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(ProcessCollector));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for name in [
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_virtual_memory_bytes ",
            "process_open_fds ",
            "process_max_fds ",
            "process_start_time_seconds ",
        ] {
            assert!(
                text.lines().any(|line| line.starts_with(name)),
                "{name} missing from:\n{text}"
            );
        }
    }
}
