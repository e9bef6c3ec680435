//! Front matter of a Markdown source: YAML between `---` lines (Jekyll, Hugo, Hexo,
//! MkDocs, Docusaurus) or TOML between `+++` lines (Hugo, Zola), read as JSON values.

use serde_json::{Map, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// Splits a Markdown file into its front matter (as a JSON object; empty when it has
/// none) and its body. A front matter that does not parse is an error naming the format.
pub(crate) fn split(text: &str) -> Result<(Map<String, Value>, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (fence, yaml) in [("---", true), ("+++", false)] {
        let Some(rest) = strip_fence_line(text, fence) else {
            continue;
        };
        let Some((head, body)) = find_closing(rest, fence) else {
            return Err(format!("front matter opened with {fence} is never closed"));
        };
        let meta = if yaml {
            parse_yaml(head)?
        } else {
            parse_toml(head)?
        };
        return Ok((meta, body));
    }
    Ok((Map::new(), text))
}

/// The text after a first line that is exactly the fence.
fn strip_fence_line<'a>(text: &'a str, fence: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(fence)?;
    let rest = rest.trim_start_matches([' ', '\t']);
    rest.strip_prefix("\r\n")
        .or_else(|| rest.strip_prefix('\n'))
}

/// The front matter before the closing fence line, and the body after it.
fn find_closing<'a>(rest: &'a str, fence: &str) -> Option<(&'a str, &'a str)> {
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == fence {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// Counts alias events (`*name`) while parsing.
struct Aliases(usize);

impl yaml_rust2::parser::EventReceiver for Aliases {
    fn on_event(&mut self, ev: yaml_rust2::Event) {
        if matches!(ev, yaml_rust2::Event::Alias(_)) {
            self.0 += 1;
        }
    }
}

fn parse_yaml(text: &str) -> Result<Map<String, Value>, String> {
    // The loader copies an anchored node at every alias, so a few lines of nested aliases
    // ("billion laughs") expand to gigabytes. Front matter has no use for them: refuse.
    let mut aliases = Aliases(0);
    yaml_rust2::parser::Parser::new_from_str(text)
        .load(&mut aliases, true)
        .map_err(|e| format!("YAML front matter: {e}"))?;
    if aliases.0 > 0 {
        return Err("YAML front matter: aliases (*name) are not supported".to_owned());
    }
    let docs = YamlLoader::load_from_str(text).map_err(|e| format!("YAML front matter: {e}"))?;
    match docs.into_iter().next().map(yaml_to_json) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err("YAML front matter must be a mapping".to_owned()),
    }
}

fn parse_toml(text: &str) -> Result<Map<String, Value>, String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| format!("TOML front matter: {e}"))?;
    match toml_to_json(toml::Value::Table(table)) {
        Value::Object(m) => Ok(m),
        _ => Ok(Map::new()),
    }
}

fn yaml_to_json(y: Yaml) -> Value {
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(s), Value::Number),
        Yaml::Integer(i) => Value::from(i),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.into_iter()
                .filter_map(|(k, v)| Some((scalar_key(k)?, yaml_to_json(v))))
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

fn scalar_key(k: Yaml) -> Option<String> {
    match k {
        Yaml::String(s) | Yaml::Real(s) => Some(s),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_front_matter_is_read_and_the_body_follows() {
        let (meta, body) = split(
            "---\ntitle: \"Hello: world\"\ndate: 2024-05-01\ntags: [rust, 'web']\ndraft: false\nweight: 3\n---\n# Body\n",
        )
        .unwrap();
        assert_eq!(meta["title"], "Hello: world");
        assert_eq!(meta["date"], "2024-05-01");
        assert_eq!(meta["tags"], serde_json::json!(["rust", "web"]));
        assert_eq!(meta["draft"], false);
        assert_eq!(meta["weight"], 3);
        assert_eq!(body, "# Body\n");
    }

    #[test]
    fn toml_front_matter_is_read_with_dates_as_strings() {
        let (meta, body) =
            split("+++\r\ntitle = 'T'\ndate = 2024-05-01T10:00:00Z\ndraft = true\n+++\r\nBody")
                .unwrap();
        assert_eq!(meta["title"], "T");
        assert_eq!(meta["date"], "2024-05-01T10:00:00Z");
        assert_eq!(meta["draft"], true);
        assert_eq!(body, "Body");
    }

    #[test]
    fn no_front_matter_leaves_the_text_whole_and_bad_front_matter_is_an_error() {
        let (meta, body) = split("# Just text\n---\nmore").unwrap();
        assert!(meta.is_empty());
        assert_eq!(body, "# Just text\n---\nmore");
        assert!(split("---\ntitle: x\n")
            .unwrap_err()
            .contains("never closed"));
        assert!(split("---\ntitle: [unclosed\n---\n")
            .unwrap_err()
            .contains("YAML"));
        assert!(split("+++\ntitle = \n+++\n").unwrap_err().contains("TOML"));
        assert!(split("---\n- a list\n---\n")
            .unwrap_err()
            .contains("mapping"));
        let laughs = "---\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\n";
        assert!(split(laughs).unwrap_err().contains("aliases"));
    }
}
