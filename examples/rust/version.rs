// Try fastedit here (see examples/README.md):
// - Generate regex on the comment block inside `main`: a `let` with the pattern lands under it.
// - Complete the rest at the end of the last line.
// - Edit selection on `parse_version`: "return a Result with an error message".

use regex::Regex;

fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim_start_matches('v').split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

fn main() {
    let text = "v1.2.3";
    println!("{:?}", parse_version(text));

    // regex: release version tag
    //   match: v1.2.3
    //   match: v10.0.1
    //   reject: 1.2.3
    //   reject: v1.2

    let beta_version_tag = Regex::new(r#"^(?:v\d+\.\d+\.\d+-beta)$"#).unwrap();
    let nightly_version_tag = Regex::new(r#"^(?:nightly-\d{8})$"#).unwrap();
    println!("beta: {}", beta_version_tag.is_match(text));
    println!("nightly: {}", nightly_version_tag.is_match(text));
    println!("release: {}", release_version_tag.is_match(
