//! `slotscope import-metrics`: reads redis_exporter's series (saved query_range responses, saved
//! scrapes, or a Prometheus HTTP API), has [`slotscope_core::import`] turn them into a recording,
//! and writes it to `FILE.tmp` then renames it to `FILE`, so a failure never leaves half a file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use slotscope_core::import::{
    self, cloudwatch, exposition, prometheus, Conversion, Series, SourceInfo,
};
use slotscope_core::node::NodeAddr;
use slotscope_core::time::{format_millis, Timestamp};

use crate::import::http_client::{self, HttpOptions, HttpUrl};
use crate::store::sink::{self, FileSink, Sink};

/// redis_exporter's series asked of a Prometheus API, one query each.
pub const QUERIED: &[&str] = &[
    "redis_commands_total",
    "redis_commands_rejected_calls_total",
    "redis_commands_failed_calls_total",
    "redis_commands_duration_seconds_total",
    "redis_errors_total",
    "redis_connections_received_total",
    "redis_connected_clients",
    "redis_uptime_in_seconds",
    "redis_instance_info",
    "redis_memory_used_bytes",
    "redis_db_keys",
    "redis_db_keys_expiring",
    "redis_connected_clients_details",
];

/// Most points Prometheus returns for one series of one query (its limit is 11,000).
const POINTS_PER_QUERY: u64 = 10_000;

/// Time allowed for one HTTP query.
const QUERY_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the series come from.
#[derive(Clone, Debug)]
pub enum Input {
    /// Saved `query_range` (or `query`) responses.
    PrometheusJson(Vec<PathBuf>),
    /// Saved scrapes, each `[HOST:PORT=]FILE`; `at` is the instant of samples without a
    /// timestamp (default: each file's modification time).
    Scrapes {
        /// The files, each with the node it belongs to when named.
        files: Vec<(Option<NodeAddr>, PathBuf)>,
        /// The instant of every scrape, overriding the files' modification times.
        at: Option<Timestamp>,
    },
    /// Saved `aws cloudwatch get-metric-data` pages (in the order fetched) and the queries
    /// given to its `--metric-data-queries`.
    CloudWatch {
        /// The queries file.
        queries: PathBuf,
        /// The pages.
        pages: Vec<PathBuf>,
    },
    /// A Prometheus-compatible HTTP API.
    Prometheus {
        /// `http://HOST:PORT[/PREFIX]`.
        url: String,
        /// From.
        from: Timestamp,
        /// To.
        to: Timestamp,
        /// Query resolution.
        step: Duration,
        /// Label matchers added to every query (`job="redis"`).
        matchers: Option<String>,
        /// TLS and the headers that log in.
        http: HttpOptions,
    },
}

/// What went wrong; every error exits with status 2 and leaves no output file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading an input file.
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    /// The input itself.
    #[error(transparent)]
    Input(#[from] import::ImportError),
    /// Asking the HTTP API.
    #[error(transparent)]
    Http(#[from] http_client::HttpError),
    /// The HTTP API answered a status other than 200 with a body that is no API error.
    #[error("{url}: HTTP status {status}: {body}")]
    Status {
        /// The query.
        url: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The API refused the request's credentials (or their absence).
    #[error(
        "{url}: HTTP status {status}: the API refused the credentials (give --prometheus-user \
         with SLOTSCOPE_PROMETHEUS_PASSWORD, or --prometheus-token-file)"
    )]
    Refused {
        /// The API's base URL.
        url: String,
        /// 401 or 403.
        status: u16,
    },
    /// Options that do not fit together.
    #[error("{0}")]
    Usage(String),
    /// Writing the output.
    #[error("cannot write {0}: {1}")]
    Write(PathBuf, std::io::Error),
}

/// Reads the input, converts it and writes `out`; returns the conversion (for the report).
///
/// # Errors
///
/// See [`Error`]; `out` is then not created (nor replaced).
pub fn run(input: &Input, out: &Path) -> Result<Conversion, Error> {
    let collector = format!("slotscope {} import-metrics", env!("CARGO_PKG_VERSION"));
    let (what, series, src) = match input {
        Input::PrometheusJson(files) => {
            let mut all = Vec::new();
            for f in files {
                let text = read(f)?;
                all.extend(prometheus::parse_response(&f.display().to_string(), &text)?);
            }
            let src = SourceInfo {
                description: format!("prometheus query_range responses ({} files)", files.len()),
                step_ms: None,
                collector,
            };
            ("the responses".to_owned(), all, src)
        }
        Input::Scrapes { files, at } => {
            let mut all = Vec::new();
            for (node, f) in files {
                let text = read(f)?;
                let t = match at {
                    Some(t) => *t,
                    None => mtime(f)?,
                };
                let mut s = exposition::parse_scrape(&f.display().to_string(), &text, t)?;
                if let Some(n) = node {
                    for x in &mut s {
                        x.labels.insert("addr".to_owned(), n.to_string());
                    }
                }
                all.extend(s);
            }
            let src = SourceInfo {
                description: format!("redis_exporter scrapes ({} files)", files.len()),
                step_ms: None,
                collector,
            };
            ("the scrapes".to_owned(), all, src)
        }
        Input::CloudWatch { queries, pages } => {
            let q = cloudwatch::parse_queries(&queries.display().to_string(), &read(queries)?)?;
            let mut read_pages = Vec::with_capacity(pages.len());
            for f in pages {
                let name = f.display().to_string();
                let page = cloudwatch::parse_page(&name, &read(f)?)?;
                read_pages.push((name, page));
            }
            let imported = cloudwatch::import("the CloudWatch pages", &q, &read_pages)?;
            let mut description = format!(
                "cloudwatch get-metric-data AWS/ElastiCache ({} page(s), {} queries; nodes named \
                 CacheClusterId:{}, no address in CloudWatch)",
                pages.len(),
                q.len(),
                cloudwatch::DEFAULT_PORT
            );
            for n in &imported.notes {
                description.push_str("; ");
                description.push_str(n);
            }
            let src = SourceInfo {
                description,
                step_ms: Some(imported.step_ms),
                collector,
            };
            ("the CloudWatch pages".to_owned(), imported.series, src)
        }
        Input::Prometheus {
            url,
            from,
            to,
            step,
            matchers,
            http,
        } => {
            let series = query_all(url, *from, *to, *step, matchers.as_deref(), http)?;
            let step_ms = u64::try_from(step.as_millis()).unwrap_or(u64::MAX);
            let src = SourceInfo {
                description: format!(
                    "prometheus query_range {url} from {} to {}, step {}",
                    from.to_rfc3339(),
                    to.to_rfc3339(),
                    format_millis(step_ms)
                ),
                step_ms: Some(step_ms),
                collector,
            };
            (url.clone(), series, src)
        }
    };
    let conv = import::convert(&what, &import::merge(series), &src)?;
    write(out, &conv)?;
    Ok(conv)
}

fn read(f: &Path) -> Result<String, Error> {
    std::fs::read_to_string(f).map_err(|e| Error::Read(f.to_owned(), e))
}

fn mtime(f: &Path) -> Result<Timestamp, Error> {
    let m = std::fs::metadata(f)
        .and_then(|m| m.modified())
        .map_err(|e| Error::Read(f.to_owned(), e))?;
    let ms = m
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    Ok(Timestamp(ms))
}

/// Writes every line to `out.tmp`, then renames it to `out`.
fn write(out: &Path, conv: &Conversion) -> Result<(), Error> {
    let tmp = sink::tmp_path(out);
    let err = |e| Error::Write(out.to_owned(), e);
    let result = (|| {
        let zstd = sink::wants_zstd(out).then_some(sink::ZSTD_LEVEL);
        let mut s = Box::new(FileSink::create(&tmp, zstd, true)?);
        for l in &conv.lines {
            s.write_line(l)?;
        }
        s.finish()?;
        std::fs::rename(&tmp, out)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}

/// Every series of [`QUERIED`] (and `redis_cluster_*`) over `[from, to]`, in pages of at most
/// [`POINTS_PER_QUERY`] steps.
fn query_all(
    url: &str,
    from: Timestamp,
    to: Timestamp,
    step: Duration,
    matchers: Option<&str>,
    http: &HttpOptions,
) -> Result<Vec<Series>, Error> {
    if to <= from {
        return Err(Error::Usage(format!(
            "--to ({}) must be after --from ({})",
            to.to_rfc3339(),
            from.to_rfc3339()
        )));
    }
    let base = HttpUrl::parse(url)?;
    let step_ms = u64::try_from(step.as_millis()).unwrap_or(u64::MAX).max(1);
    let matchers = matchers
        .map(|m| {
            m.trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .trim()
                .to_owned()
        })
        .filter(|m| !m.is_empty());
    let mut queries: Vec<String> = QUERIED
        .iter()
        .map(|n| match &matchers {
            Some(m) => format!("{n}{{{m}}}"),
            None => (*n).to_owned(),
        })
        .collect();
    queries.push(match &matchers {
        Some(m) => format!("{{__name__=~\"redis_cluster_.*\",{m}}}"),
        None => "{__name__=~\"redis_cluster_.*\"}".to_owned(),
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("cannot start the runtime: {e}")))?;
    let mut out = Vec::new();
    for q in &queries {
        let mut start = from.0;
        while start <= to.0 {
            let end = (start + step_ms * (POINTS_PER_QUERY - 1)).min(to.0);
            let path = format!(
                "{}/api/v1/query_range?query={}&start={}&end={}&step={}",
                base.path,
                encode(q),
                seconds(start),
                seconds(end),
                seconds(step_ms)
            );
            let (status, body) =
                rt.block_on(http_client::get(&base, &path, QUERY_TIMEOUT, http))?;
            let body = String::from_utf8_lossy(&body).into_owned();
            let shown = base.shown(&path);
            if status == 401 || status == 403 {
                return Err(Error::Refused {
                    url: base.shown(&base.path),
                    status,
                });
            }
            match prometheus::parse_response(&format!("query {q}"), &body) {
                Ok(s) if status == 200 => out.extend(s),
                Err(e @ import::ImportError::ApiError { .. }) => return Err(e.into()),
                Err(e) if status == 200 => return Err(e.into()),
                _ => {
                    return Err(Error::Status {
                        url: shown,
                        status,
                        body: body.chars().take(200).collect(),
                    })
                }
            }
            start = end + step_ms;
        }
    }
    Ok(out)
}

/// Milliseconds as Prometheus's decimal seconds (`1796160410.5`).
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{}.{:03}", ms / 1000, ms % 1000)
    }
}

/// Percent-encodes a query parameter.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_encoded() {
        assert_eq!(encode("a{b=\"c\"}"), "a%7Bb%3D%22c%22%7D");
        assert_eq!(seconds(1_500), "1.500");
        assert_eq!(seconds(15_000), "15");
    }
}
