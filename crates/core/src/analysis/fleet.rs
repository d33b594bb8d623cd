//! A partial fleet: a loss that stays at k of n of a group's traffic is the shape of k of its n
//! instances failing while the others are fine (the founding incident's residual 14 % error rate
//! was 1 of 7 instances still on the old build: 1/7 = 14.3 %). With several client hosts in the
//! group, n is their number; with one host (or none seen), the smallest n up to [`MAX_N`] whose
//! k/n the share matches.

/// The largest fleet the share alone is matched against.
pub const MAX_N: u64 = 10;

/// How close a share must be to k/n when n is the group's hosts: within this fraction of k/n,
/// and at least one point.
const TOLERANCE: f64 = 0.12;
/// How close when n is not known: tighter, since some k/n lies near almost any share.
const TOLERANCE_UNKNOWN_N: f64 = 0.04;

/// A share read as k of n instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Shape {
    /// Instances affected.
    pub(super) k: u64,
    /// Instances in all.
    pub(super) n: u64,
    /// Whether n is the group's number of client hosts (else only the share's best fraction).
    pub(super) n_known: bool,
}

impl Shape {
    /// `1 of 7 instances of G`, with how n was found.
    pub(super) fn text(&self, group: &str) -> String {
        if self.n_known {
            format!("{} of the {} instances of {group}", self.k, self.n)
        } else {
            format!(
                "{} of {} instances of {group} (the census does not tell how many instances run: \
                 {} is the smallest number the share fits)",
                self.k, self.n, self.n
            )
        }
    }
}

/// Whether `share` is `k/n` to within the tolerance.
fn fits(share: f64, k: u64, n: u64, tolerance: f64) -> bool {
    let f = crate::float::from_u64(k) / crate::float::from_u64(n);
    (share - f).abs() <= (tolerance * f).max(0.01)
}

/// `share` (of a group's traffic lost or failing, 0–1) as k of n instances: n the group's
/// `hosts` when there are several, else the smallest n ≤ [`MAX_N`] it fits; `None` when no k
/// from 1 to n − 1 fits (an all-or-nothing share is not a partial fleet).
pub(super) fn shape(share: f64, hosts: usize) -> Option<Shape> {
    if !(0.0..1.0).contains(&share) {
        return None;
    }
    let hosts = hosts as u64;
    if hosts >= 2 {
        return (1..hosts)
            .find(|&k| fits(share, k, hosts, TOLERANCE))
            .map(|k| Shape {
                k,
                n: hosts,
                n_known: true,
            });
    }
    if share > 0.9 {
        return None;
    }
    (2..=MAX_N).find_map(|n| {
        (1..n)
            .find(|&k| fits(share, k, n, TOLERANCE_UNKNOWN_N))
            .map(|k| Shape {
                k,
                n,
                n_known: false,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seventh_is_one_of_seven_hosts() {
        let s = shape(0.143, 7).unwrap();
        assert_eq!((s.k, s.n, s.n_known), (1, 7, true));
        assert_eq!(s.text("api"), "1 of the 7 instances of api");
        // Two of seven hosts.
        assert_eq!(shape(0.29, 7).map(|s| s.k), Some(2));
        // Nothing near a seventh's multiples.
        assert_eq!(shape(0.21, 7), None);
    }

    #[test]
    fn without_hosts_the_smallest_fleet_the_share_fits() {
        let s = shape(0.333, 1).unwrap();
        assert_eq!((s.k, s.n, s.n_known), (1, 3, false));
        assert_eq!(shape(0.5, 0).map(|s| (s.k, s.n)), Some((1, 2)));
        assert_eq!(shape(0.999, 1), None);
        assert_eq!(shape(1.0, 4), None);
    }

    /// Every k of n up to ten, drawn with a little noise, reads back as k of n with n known.
    #[test]
    fn every_k_of_n_reads_back() {
        for n in 2..=MAX_N {
            for k in 1..n {
                let share = k as f64 / n as f64 * 1.08;
                let s = shape(share, n as usize).unwrap_or_else(|| panic!("{k}/{n}"));
                assert_eq!((s.k, s.n), (k, n));
            }
        }
    }
}
