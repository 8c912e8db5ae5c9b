//! The fast path's reading steps on the JSON reader: the shapes are read member by member, and
//! whatever a shape does not accept ends the fast path with `None`.

use alloc::borrow::Cow;

use crate::json::Reader;

impl<'a> Reader<'a> {
    /// An object whose every member `member` reads (it gets the key and reads the value). A key
    /// with an escape is no key of these shapes as written: it declines the frame, and the
    /// members get the key borrowed.
    pub(super) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            let Cow::Borrowed(key) = self.str()? else {
                return None;
            };
            if !self.eat(b':') {
                return None;
            }
            member(self, key)?;
            if self.eat(b'}') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// An array whose every element `element` reads.
    pub(super) fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(());
        }
        loop {
            element(self)?;
            if self.eat(b']') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    pub(super) fn bool(&mut self) -> Option<bool> {
        if self.word(b"true") {
            Some(true)
        } else {
            self.word(b"false").then_some(false)
        }
    }

    #[inline(always)]
    pub(super) fn null(&mut self) -> Option<()> {
        self.ws();
        let rest = self.t.as_bytes().get(self.at..)?;
        rest.starts_with(b"null").then(|| self.at += 4)
    }

    /// A string after optional whitespace, borrowed when it has no escapes.
    #[inline(always)]
    pub(super) fn str(&mut self) -> Option<Cow<'a, str>> {
        self.ws();
        self.string().ok()
    }
}
