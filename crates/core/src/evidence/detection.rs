//! Detection of the format of outside evidence ([`Format::Auto`]).

use super::app_log::{find_class, is_app_text_line, json_object};
use super::cloud::describe_events;
use super::format::Format;

/// The format of `text`: JSON lines, a line with an error class token, or a timestamped line whose
/// first words hold an upper-case log level (`ERROR`, `INFO`, …) make an application log; anything
/// else (including the JSON document of `aws elasticache describe-events`) a cloud event log.
pub fn detect(text: &str) -> Format {
    if describe_events(text).is_some() {
        return Format::Cloud;
    }
    let mut json = 0u32;
    let mut other = 0u32;
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(200)
    {
        if json_object(line).is_some() {
            json += 1;
        } else {
            other += 1;
        }
        if find_class(line).is_some() || is_app_text_line(line) {
            return Format::AppLog;
        }
    }
    if json > 0 && json >= other {
        Format::AppLog
    } else {
        Format::Cloud
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixture::{INCIDENT_APP, INCIDENT_CLOUD};

    #[test]
    fn detection() {
        assert_eq!(detect(INCIDENT_CLOUD), Format::Cloud);
        assert_eq!(detect(INCIDENT_APP), Format::AppLog);
        assert_eq!(detect("{\"time\": 1, \"msg\": \"x\"}\n"), Format::AppLog);
        assert_eq!(
            detect("2025-03-14 05:17:30,123 ERROR app request failed\n"),
            Format::AppLog
        );
        assert_eq!(
            detect("[2025-03-14 05:17:30,123] INFO in app: started\n"),
            Format::AppLog
        );
        assert_eq!(
            detect("05:21:24  Failover to replica node 0001-002 completed\n"),
            Format::Cloud
        );
        assert_eq!(detect(""), Format::Cloud);
    }
}
