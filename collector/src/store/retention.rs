//! Which files of an always-on recording directory to delete (`record --retain` /
//! `--retain-size`): the choice alone, sans IO, so that it can be tested on made-up directories.
//!
//! The rules: a file is deleted when its last write is older than the age limit, and then, while
//! the directory holds more bytes than the size limit, the oldest remaining files are deleted. The
//! file being written is never deleted (it counts towards the size).

use std::path::{Path, PathBuf};
use std::time::Duration;

use slotscope_core::Timestamp;

/// How much of an always-on recording to keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    /// Delete files whose last write (the end of their period) is older than this.
    pub max_age: Option<Duration>,
    /// Delete the oldest files while all of them together are larger than this many bytes.
    pub max_bytes: Option<u64>,
}

/// A file of the directory, as the retention sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// Its path.
    pub path: PathBuf,
    /// When it was last written (the end of its period).
    pub ended: Timestamp,
    /// Its size on disk.
    pub bytes: u64,
}

impl Retention {
    /// Whether this keeps everything.
    pub fn keeps_all(&self) -> bool {
        self.max_age.is_none() && self.max_bytes.is_none()
    }

    /// The files of `files` (oldest first) to delete at `now`; `current` (the file being written)
    /// is never among them.
    pub fn deletions(&self, files: &[Stored], current: &Path, now: Timestamp) -> Vec<PathBuf> {
        let mut keep: Vec<&Stored> = Vec::with_capacity(files.len());
        let mut gone: Vec<PathBuf> = Vec::new();
        for f in files {
            let too_old = self.max_age.is_some_and(|age| {
                let age_ms = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
                now.millis_since(f.ended) > age_ms
            });
            if too_old && f.path != current {
                gone.push(f.path.clone());
            } else {
                keep.push(f);
            }
        }
        if let Some(limit) = self.max_bytes {
            let mut total: u64 = keep.iter().map(|f| f.bytes).sum();
            for f in keep {
                if total <= limit {
                    break;
                }
                if f.path != current {
                    total -= f.bytes;
                    gone.push(f.path.clone());
                }
            }
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(name: &str, ended: u64, bytes: u64) -> Stored {
        Stored {
            path: PathBuf::from(name),
            ended: Timestamp(ended),
            bytes,
        }
    }

    /// A directory of `n` hourly files of random sizes, the last one being written.
    fn hourly(n: u64, seed: u64) -> Vec<Stored> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                stored(&format!("f{i:03}"), (i + 1) * 3_600_000, 1 + x % 1000)
            })
            .collect()
    }

    #[test]
    fn age_deletes_files_that_ended_before_the_limit_but_never_the_current_one() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        println!("seed {seed}");
        let files = hourly(200, seed);
        let now = Timestamp(200 * 3_600_000 + 1);
        let r = Retention {
            max_age: Some(Duration::from_secs(7 * 24 * 3600)),
            max_bytes: None,
        };
        let current = files.last().unwrap().path.clone();
        let gone = r.deletions(&files, &current, now);
        for f in &files {
            let old = now.millis_since(f.ended) > 7 * 24 * 3_600_000;
            assert_eq!(gone.contains(&f.path), old, "{f:?}");
        }
        assert!(!gone.is_empty());
        // A current file older than the limit (the clock jumped) is kept all the same.
        let gone = r.deletions(&files, &files[0].path, now);
        assert!(!gone.contains(&files[0].path));
        assert!(gone.contains(&files[1].path));
    }

    #[test]
    fn size_deletes_the_oldest_until_the_rest_fits() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        println!("seed {seed}");
        let files = hourly(50, seed);
        let total: u64 = files.iter().map(|f| f.bytes).sum();
        let limit = total / 3;
        let r = Retention {
            max_age: None,
            max_bytes: Some(limit),
        };
        let current = files.last().unwrap().path.clone();
        let gone = r.deletions(&files, &current, Timestamp(0));
        // The deleted files are a prefix (the oldest), the rest fits, and one file fewer would not.
        let k = gone.len();
        assert!(k > 0);
        for (f, g) in files.iter().zip(&gone) {
            assert_eq!(&f.path, g);
        }
        let kept: u64 = files[k..].iter().map(|f| f.bytes).sum();
        assert!(kept <= limit, "{kept} > {limit}");
        assert!(kept + files[k - 1].bytes > limit);
    }

    #[test]
    fn the_current_file_alone_over_the_size_is_kept_and_everything_else_goes() {
        let files = vec![stored("a", 1, 10), stored("b", 2, 10), stored("c", 3, 500)];
        let r = Retention {
            max_age: None,
            max_bytes: Some(100),
        };
        let gone = r.deletions(&files, Path::new("c"), Timestamp(4));
        assert_eq!(gone, vec![PathBuf::from("a"), PathBuf::from("b")]);
        assert!(Retention::default().keeps_all());
        assert!(Retention::default()
            .deletions(&files, Path::new("c"), Timestamp(u64::MAX))
            .is_empty());
    }

    #[test]
    fn age_and_size_together_delete_both_ways() {
        let files = vec![
            stored("a", 1_000, 10),
            stored("b", 5_000, 60),
            stored("c", 6_000, 60),
            stored("d", 7_000, 10),
        ];
        let r = Retention {
            max_age: Some(Duration::from_secs(3)),
            max_bytes: Some(80),
        };
        let gone = r.deletions(&files, Path::new("d"), Timestamp(7_500));
        assert_eq!(gone, vec![PathBuf::from("a"), PathBuf::from("b")]);
    }
}
