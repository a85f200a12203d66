//! diskspd XML profiles (`-X<profile.xml>`, the `<Profile>` diskspd writes with `-Rxml`
//! and reads with `-X`) → the words a command line would give, one line per
//! `<Target>` of each `<TimeSpan>`. Every element is looked up in
//! [`diskspd_options::DISKSPD_XML`], which names the switch it stands for; the line
//! reader then treats that switch as the command line's, so what a switch means is
//! written once. Elements no switch spells carry their own effect there. An element
//! the schema lacks, a repeated one or a wrong value is an error at its line:column.
//! [`super::profile_merge`] turns the lines into runs.

use std::path::Path;

use roxmltree::{Document, Node};

use super::profile_merge::{self, Span};
use super::{arg_loc, diskspd_options, Word};
use crate::plan::compat::diskspd_options::{Element, Scope, Via};
use crate::plan::compat::{CompatError, Loc, Translated, UnsupportedList};

/// The switches diskspd lets a line with `-X` carry (CmdLineParser's composable ones):
/// `-d -W -C -z` override every time span's, `-R -v -:` the profile's.
const WITH_X: &[char] = &['d', 'W', 'C', 'z', 'R', 'v', ':'];

/// What the command line gives besides the profile.
struct LineArgs {
    profile: (String, Loc),
    switches: Vec<Word>,
    /// Paths for the template targets `*1`, `*2`, … and whether one was used.
    substs: Vec<(String, Loc, bool)>,
}

/// `diskspd -X<profile.xml> [-d… -W… -C… -z… -R… -v -:…] [paths for *1 *2 …]`.
pub(super) fn parse_profile(
    args: &[String],
    start: usize,
    target_override: Option<&str>,
) -> Result<Translated, CompatError> {
    let line = line_args(args, start)?;
    let (path, ploc) = &line.profile;
    let text = std::fs::read_to_string(path)
        .map_err(|e| ploc.error(format!("cannot read the profile {path}: {e}")))?;
    let source = Path::new(path)
        .file_name()
        .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
    read_profile(&source, &text, line, target_override)
}

/// The profile `text` (named `source` in locations) with the line's switches and paths.
fn read_profile(
    source: &str,
    text: &str,
    mut line: LineArgs,
    target_override: Option<&str>,
) -> Result<Translated, CompatError> {
    let doc = Document::parse(text).map_err(|e| {
        let p = e.pos();
        at(source, p.row as usize, p.col as usize).error(format!("not XML diskspd can read: {e}"))
    })?;
    let mut r = Reader {
        source,
        doc: &doc,
        substs: &mut line.substs,
        target_override,
        un: UnsupportedList::default(),
    };
    let (profile_words, spans) = r.profile(profile_root(doc.root_element()))?;
    let mut un = std::mem::take(&mut r.un);
    if let Some((p, loc, _)) = line.substs.iter().find(|s| !s.2) {
        return Err(loc.error(format!(
            "'{p}' substitutes no template target (*1, *2, …) of the profile"
        )));
    }
    let spans = spans
        .into_iter()
        .map(|mut s| {
            let mut head = profile_words.clone();
            head.append(&mut s.words);
            head.extend(line.switches.iter().cloned());
            s.words = head;
            s
        })
        .collect();
    profile_merge::translate(spans, target_override, &mut un).map(|plan| Translated {
        plan,
        unsupported: un.0,
    })
}

/// The `-R` switch a profile file's `<ResultFormat>` stands for, if it has one (an
/// unreadable profile has none: reading it for the run says why).
pub(super) fn result_format(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let doc = Document::parse(&text).ok()?;
    let node =
        children(profile_root(doc.root_element())).find(|n| n.has_tag_name("ResultFormat"))?;
    Some(format!("-R{}", node.text()?.trim()))
}

/// The `<Profile>` to read: the root, or the `<Profile>` of a whole `-Rxml` result
/// (`<Results>`), so a past run's own record can be run again as it is.
fn profile_root<'a, 'd>(root: Node<'a, 'd>) -> Node<'a, 'd> {
    match root.has_tag_name("Results") {
        true => children(root)
            .find(|n| n.has_tag_name("Profile"))
            .unwrap_or(root),
        false => root,
    }
}

fn at(source: &str, line: usize, column: usize) -> Loc {
    Loc::At {
        source: source.to_string(),
        line,
        column,
    }
}

/// Splits the line: one `-X`, the switches diskspd composes with it, then paths.
fn line_args(args: &[String], start: usize) -> Result<LineArgs, CompatError> {
    let mut profile = None;
    let mut switches = Vec::new();
    let mut substs = Vec::new();
    for (i, a) in args.iter().enumerate().skip(start) {
        let loc = arg_loc(args, i);
        let Some(opt) = a.strip_prefix('-') else {
            substs.push((a.clone(), loc, false));
            continue;
        };
        if !substs.is_empty() {
            return Err(loc.error(format!(
                "'{a}': diskspd takes its switches before the targets"
            )));
        }
        match opt.chars().next() {
            Some('X') if profile.is_some() => {
                return Err(loc.error("diskspd reads one XML profile (-X given twice)"))
            }
            Some('X') if opt.len() == 1 => return Err(loc.error("-X needs a profile's path")),
            Some('X') => profile = Some((opt[1..].to_string(), loc)),
            Some(c) if WITH_X.contains(&c) => switches.push(Word {
                text: a.clone(),
                shown: a.clone(),
                loc,
            }),
            _ => {
                return Err(loc.error(format!(
                    "'{a}': with -X diskspd takes no switch but -d -W -C -z -R -v -: \
                     (the profile says the rest)"
                )))
            }
        }
    }
    let profile = profile.expect("the caller saw -X");
    Ok(LineArgs {
        profile,
        switches,
        substs,
    })
}

struct Reader<'a, 'd> {
    source: &'a str,
    doc: &'a Document<'d>,
    substs: &'a mut Vec<(String, Loc, bool)>,
    target_override: Option<&'a str>,
    un: UnsupportedList,
}

/// The element children of `node` (comments, whitespace and processing instructions
/// are no part of a profile).
fn children<'a, 'd>(node: Node<'a, 'd>) -> impl Iterator<Item = Node<'a, 'd>> {
    node.children().filter(Node::is_element)
}

impl<'d> Reader<'_, 'd> {
    fn loc(&self, node: Node) -> Loc {
        let p = self.doc.text_pos_at(node.range().start);
        at(self.source, p.row as usize, p.col as usize)
    }

    fn profile(&mut self, root: Node<'_, 'd>) -> Result<(Vec<Word>, Vec<Span>), CompatError> {
        if root.tag_name().name() != "Profile" {
            return Err(self.loc(root).error(format!(
                "<{}>: a diskspd profile's root element is <Profile> (or an -Rxml \
                 <Results> holding one)",
                root.tag_name().name()
            )));
        }
        let mut words = Vec::new();
        let mut spans = Vec::new();
        for (node, el) in self.elements(root, Scope::Profile)? {
            if el.name == "TimeSpans" {
                for span in children(node) {
                    self.expect_name(span, "TimeSpan", "<TimeSpans>")?;
                    spans.push(self.span(span)?);
                }
            } else {
                self.element(node, el, &mut words)?;
            }
        }
        if spans.is_empty() {
            return Err(self
                .loc(root)
                .error("the profile has no <TimeSpans><TimeSpan>"));
        }
        Ok((words, spans))
    }

    fn span(&mut self, node: Node<'_, 'd>) -> Result<Span, CompatError> {
        let mut s = Span {
            words: Vec::new(),
            targets: Vec::new(),
            shared_threads: false,
            loc: self.loc(node),
        };
        for (child, el) in self.elements(node, Scope::TimeSpan)? {
            match el.name {
                "Targets" => {
                    for t in children(child) {
                        self.expect_name(t, "Target", "<Targets>")?;
                        s.targets.push(self.target(t)?);
                    }
                }
                "ThreadCount" => {
                    let before = s.words.len();
                    self.element(child, el, &mut s.words)?;
                    s.shared_threads = s.words.len() > before;
                }
                _ => self.element(child, el, &mut s.words)?,
            }
        }
        if s.targets.is_empty() {
            return Err(s.loc.error("<TimeSpan> has no <Targets><Target>"));
        }
        Ok(s)
    }

    fn target(&mut self, node: Node<'_, 'd>) -> Result<Vec<Word>, CompatError> {
        let mut words = Vec::new();
        let mut path = None;
        let (mut stride, mut interlocked) = (None, None);
        for (child, el) in self.elements(node, Scope::Target)? {
            match el.name {
                "Path" => path = Some(self.path(child)?),
                "StrideSize" => stride = Some((self.number(child)?, child)),
                "InterlockedSequential" => interlocked = Some((self.boolean(child)?, child)),
                _ => self.element(child, el, &mut words)?,
            }
        }
        // <StrideSize> and <InterlockedSequential> are one switch: -s[i][stride].
        let seq = match (stride, interlocked) {
            (Some((n, at)), Some((true, _))) => Some((format!("-si{n}"), at)),
            (None, Some((true, at))) => Some(("-si".to_string(), at)),
            (Some((n, at)), _) => Some((format!("-s{n}"), at)),
            (None, _) => None,
        };
        if let Some((text, at)) = seq {
            words.push(self.word(at, text));
        }
        let Some(path) = path else {
            return Err(self.loc(node).error("<Target> has no <Path>"));
        };
        words.push(path);
        Ok(words)
    }

    /// The target's path, a template (`*1`) filled in from the command line.
    fn path(&mut self, node: Node) -> Result<Word, CompatError> {
        let loc = self.loc(node);
        let text = self.text(node)?;
        let mut path = text.to_string();
        if let Some(n) = text.strip_prefix('*') {
            let i: usize = n.parse().ok().filter(|&i| i > 0).ok_or_else(|| {
                loc.error(format!(
                    "'{text}': a template target is * and a number from 1"
                ))
            })?;
            match self.substs.get_mut(i - 1) {
                Some(s) => {
                    s.2 = true;
                    path = s.0.clone();
                }
                None if self.target_override.is_some() => {}
                None => {
                    return Err(loc.error(format!(
                        "template target {text}: give its path after the profile \
                         (diskspd -Xprofile.xml <path> …) or with --target"
                    )))
                }
            }
        }
        if path.is_empty() || path.starts_with('-') {
            return Err(loc.error(format!("'{path}' is not a target path")));
        }
        Ok(Word {
            text: path.clone(),
            shown: path,
            loc,
        })
    }

    /// The element children of `node` in `scope`, each found in the table once.
    fn elements<'a>(
        &self,
        node: Node<'a, 'd>,
        scope: Scope,
    ) -> Result<Vec<(Node<'a, 'd>, &'static Element)>, CompatError> {
        let parent = node.tag_name().name();
        let mut seen: Vec<(Node<'a, 'd>, &'static Element)> = Vec::new();
        for child in children(node) {
            let name = child.tag_name().name();
            let Some(el) = diskspd_options::element(scope, name) else {
                return Err(self.loc(child).error(format!(
                    "<{name}> is no element of <{parent}> in diskspd's profile schema"
                )));
            };
            if seen.iter().any(|(_, e)| e.name == name) {
                return Err(self
                    .loc(child)
                    .error(format!("<{name}> given twice in one <{parent}>")));
            }
            seen.push((child, el));
        }
        Ok(seen)
    }

    fn expect_name(&self, node: Node, name: &str, parent: &str) -> Result<(), CompatError> {
        if node.tag_name().name() == name {
            return Ok(());
        }
        Err(self.loc(node).error(format!(
            "<{}> in {parent}, which holds only <{name}>",
            node.tag_name().name()
        )))
    }

    /// A word for the switch `text`, shown as the element it was read from.
    fn word(&self, node: Node, text: String) -> Word {
        Word {
            shown: format!("<{}> ({text})", node.tag_name().name()),
            text,
            loc: self.loc(node),
        }
    }

    /// One element as its switch, or its own effect.
    fn element(
        &mut self,
        node: Node,
        el: &Element,
        out: &mut Vec<Word>,
    ) -> Result<(), CompatError> {
        let switch = match el.via {
            Via::Number(p) => Some(format!("-{p}{}", self.number(node)?)),
            Via::NonZero(p) => Some(self.number(node)?)
                .filter(|&n| n > 0)
                .map(|n| format!("-{p}{n}")),
            Via::Flag(s) => self.boolean(node)?.then(|| s.to_string()),
            Via::Choice(words) => {
                let t = self.text(node)?;
                let hit = words.iter().find(|(w, _)| *w == t).ok_or_else(|| {
                    let names: Vec<&str> = words.iter().map(|w| w.0).collect();
                    self.loc(node).error(format!(
                        "<{}>{t}: diskspd takes {}",
                        el.name,
                        names.join(", ")
                    ))
                })?;
                Some(hit.1.to_string())
            }
            Via::Nested(_) => self.nested(node, el.name)?,
            Via::Own(effect) => {
                use crate::plan::compat::fio_options::Effect;
                let loc = self.loc(node);
                match effect {
                    Effect::Unsupported(why) => {
                        self.un.push(format!("<{}> — {why}", el.name), &loc)
                    }
                    Effect::Refused(why) => return Err(loc.error(why)),
                    _ => {}
                }
                None
            }
        };
        if let Some(s) = switch {
            out.push(self.word(node, s));
        }
        Ok(())
    }

    /// The text of a leaf element, trimmed as the schema's types are.
    fn text<'n>(&self, node: Node<'n, 'd>) -> Result<&'n str, CompatError> {
        if let Some(c) = children(node).next() {
            return Err(self.loc(c).error(format!(
                "<{}> holds a value, not <{}>",
                node.tag_name().name(),
                c.tag_name().name()
            )));
        }
        Ok(node.text().unwrap_or("").trim())
    }

    /// A whole number, as the schema's unsigned types take it.
    fn number(&self, node: Node) -> Result<u64, CompatError> {
        let t = self.text(node)?;
        number_text(t).ok_or_else(|| {
            self.loc(node).error(format!(
                "<{}>{t}: diskspd takes a whole number (bytes, seconds or a count; no units)",
                node.tag_name().name()
            ))
        })
    }

    /// `true` or `false`. The schema also lets 1 and 0 through, but diskspd's reader
    /// takes only `true` as true, so a 1 would be false there: refused.
    fn boolean(&self, node: Node) -> Result<bool, CompatError> {
        match self.text(node)? {
            "true" => Ok(true),
            "false" | "0" => Ok(false),
            t => Err(self.loc(node).error(format!(
                "<{}>{t}: give true or false (diskspd reads anything but 'true' as false)",
                node.tag_name().name()
            ))),
        }
    }
}

fn number_text(t: &str) -> Option<u64> {
    (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .then(|| t.parse().ok())
        .flatten()
}

mod nested;
