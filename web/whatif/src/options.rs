//! Model options as typed in the what-if form.

/// Splits `key=value` pairs separated by spaces or commas. A piece without `=` after a pair
/// continues its value (`startup_nodes=a:1,b:2` keeps both addresses).
pub fn parse_options(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for piece in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
    {
        match piece.split_once('=') {
            Some((k, v)) if !k.is_empty() => out.push((k.to_owned(), v.to_owned())),
            _ => match out.last_mut() {
                Some((_, v)) if !piece.contains('=') => {
                    v.push(',');
                    v.push_str(piece);
                }
                _ => return Err(format!("`{piece}` is not key=value")),
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_on_spaces_and_commas_and_keep_address_lists() {
        assert_eq!(
            parse_options("address_remap=127.0.0.1:22809, socket_timeout=0.5").unwrap(),
            vec![
                ("address_remap".into(), "127.0.0.1:22809".into()),
                ("socket_timeout".into(), "0.5".into())
            ]
        );
        assert_eq!(
            parse_options(" startup_nodes=a:1,b:2 reinitialize_steps=0 ").unwrap(),
            vec![
                ("startup_nodes".into(), "a:1,b:2".into()),
                ("reinitialize_steps".into(), "0".into())
            ]
        );
        assert!(parse_options("").unwrap().is_empty());
        assert!(parse_options("oops").is_err());
        assert!(parse_options("=1").is_err());
    }
}
