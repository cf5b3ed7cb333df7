//! Decoders for the encodings payloads hide behind: a decoded constant is analysed like
//! any other code, so `echo <base64> | base64 -d | sh` is judged by what it runs. Each takes
//! text and gives text only when the result is readable (mostly printable UTF-8).

use base64::Engine;

/// Decoded output must be at least this printable to be taken as code.
fn readable(bytes: Vec<u8>) -> Option<String> {
    let text = String::from_utf8(bytes).ok()?;
    let printable = text
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .count();
    (printable * 10 >= text.chars().count() * 9).then_some(text)
}

/// Standard or URL-safe base64, padded or not, white space ignored.
pub(crate) fn base64(text: &str) -> Option<String> {
    let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let clean = clean.trim_end_matches('=');
    let engines = [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    engines
        .iter()
        .find_map(|e| e.decode(clean).ok())
        .and_then(readable)
}

/// PowerShell's `-EncodedCommand`: base64 of UTF-16LE.
pub(crate) fn base64_utf16(text: &str) -> Option<String> {
    let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(clean.trim())
        .ok()?;
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).ok()
}

/// Hex digits (`6375726c`, `\x63\x75`, `63 75 72`).
pub(crate) fn hex(text: &str) -> Option<String> {
    let digits: String = text
        .replace("\\x", "")
        .replace("0x", "")
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ',')
        .collect();
    if !digits.len().is_multiple_of(2) || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .ok()?;
    readable(bytes)
}

/// ROT13 of ASCII letters.
pub(crate) fn rot13(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='m' | 'A'..='M' => (c as u8 + 13) as char,
            'n'..='z' | 'N'..='Z' => (c as u8 - 13) as char,
            _ => c,
        })
        .collect()
}

/// Character codes (`99,117,114,108` of `String.fromCharCode` or `chr()` lists).
pub(crate) fn char_codes(codes: &[i64]) -> Option<String> {
    codes
        .iter()
        .map(|c| u32::try_from(*c).ok().and_then(char::from_u32))
        .collect()
}

/// C-style escapes of `$'...'` and `printf` (`\x63`, `\143`, `\n`).
pub(crate) fn c_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('x') => {
                let h: String = std::iter::from_fn(|| chars.next_if(char::is_ascii_hexdigit))
                    .take(2)
                    .collect();
                match u8::from_str_radix(&h, 16) {
                    Ok(b) => out.push(b as char),
                    Err(_) => out.push_str("\\x"),
                }
            }
            Some(d @ '0'..='7') => {
                let mut o = d.to_string();
                while o.len() < 3 {
                    match chars.next_if(|c| ('0'..='7').contains(c)) {
                        Some(c) => o.push(c),
                        None => break,
                    }
                }
                match u8::from_str_radix(&o, 8) {
                    Ok(b) => out.push(b as char),
                    Err(_) => out.push_str(&o),
                }
            }
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders() {
        assert_eq!(base64("Y3VybCB4").as_deref(), Some("curl x"));
        assert_eq!(base64("Y3VybCB4\n").as_deref(), Some("curl x"));
        assert_eq!(base64("not base64!"), None);
        assert_eq!(hex("6375726c").as_deref(), Some("curl"));
        assert_eq!(hex("\\x63\\x75").as_deref(), Some("cu"));
        assert_eq!(rot13("phey"), "curl");
        assert_eq!(char_codes(&[99, 117]).as_deref(), Some("cu"));
        assert_eq!(c_escapes("\\x63\\165rl"), "curl");
        assert_eq!(base64_utf16("YwB1AHIAbAA=").as_deref(), Some("curl"));
    }
}
