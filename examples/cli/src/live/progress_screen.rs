//! How `kruise rollout status` shows progress: on a terminal, the message and one bar per revision
//! redrawn in place; otherwise one line each time what it says changes.

use std::io::Write;

use super::rollout_status::Progress;

/// The output of `kruise rollout status`.
#[derive(Debug, Default)]
pub struct ProgressScreen {
    terminal: bool,
    drawn: usize,
    last: String,
}

impl ProgressScreen {
    /// A screen for a terminal (`terminal`) or for a pipe or file.
    #[must_use]
    pub fn new(terminal: bool) -> Self {
        Self {
            terminal,
            ..Self::default()
        }
    }

    /// Shows `progress`: redraws the frame on a terminal, else writes its line if it changed.
    ///
    /// # Errors
    /// Writing fails.
    pub fn show(&mut self, progress: &Progress, out: &mut impl Write) -> std::io::Result<()> {
        if self.terminal {
            let frame: Vec<String> = std::iter::once(progress.message.clone())
                .chain(
                    progress
                        .bars
                        .iter()
                        .map(|bar| format!("  {}", bar.render())),
                )
                .collect();
            if self.drawn > 0 {
                // Back to the first line of the previous frame.
                write!(out, "\x1b[{}A", self.drawn)?;
            }
            for line in &frame {
                writeln!(out, "\x1b[2K{line}")?;
            }
            // Lines left over from a taller previous frame.
            for _ in frame.len()..self.drawn {
                writeln!(out, "\x1b[2K")?;
            }
            self.drawn = frame.len().max(self.drawn);
        } else {
            let line = progress.line();
            if line == self.last {
                return Ok(());
            }
            writeln!(out, "{line}")?;
            self.last = line;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::rollout_status::RevisionBar;

    fn progress(message: &str, bars: usize) -> Progress {
        Progress {
            complete: false,
            message: message.to_owned(),
            bars: (0..bars)
                .map(|index| RevisionBar {
                    role: "update",
                    revision: format!("r{index}"),
                    pods: 1,
                    ready: Some(1),
                    desired: 2,
                })
                .collect(),
        }
    }

    #[test]
    fn a_pipe_gets_one_line_per_change() {
        let mut screen = ProgressScreen::new(false);
        let mut out = Vec::new();
        screen.show(&progress("a", 1), &mut out).unwrap();
        screen.show(&progress("a", 1), &mut out).unwrap();
        screen.show(&progress("b", 1), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(
            text.starts_with("a | update r0 1/2 pods (1 ready)\n"),
            "{text}"
        );
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn a_terminal_gets_the_frame_redrawn_in_place() {
        let mut screen = ProgressScreen::new(true);
        let mut out = Vec::new();
        screen.show(&progress("first", 2), &mut out).unwrap();
        let first = String::from_utf8(out.clone()).unwrap();
        assert_eq!(
            first.matches('\n').count(),
            3,
            "message and two bars: {first:?}"
        );
        assert!(!first.contains("\x1b[3A"));
        out.clear();
        screen.show(&progress("second", 1), &mut out).unwrap();
        let second = String::from_utf8(out).unwrap();
        assert!(second.starts_with("\x1b[3A\x1b[2Ksecond\n"), "{second:?}");
        assert_eq!(
            second.matches('\n').count(),
            3,
            "the third line is cleared: {second:?}"
        );
    }
}
