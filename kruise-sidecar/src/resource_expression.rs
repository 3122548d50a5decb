//! The expression language of `resourcesPolicy.resourcesExpr`: arithmetic over one resource of the target
//! containers, such as `max(cpu*50%, 50m)`.
//!
//! * operators `+`, `-`, `*`, `/` (usual precedence, left to right), unary `-`, parentheses;
//! * functions `max(a, b, ...)` and `min(a, b, ...)`;
//! * numbers: integers and decimals in the resource's base unit (`0.5` is half a core, `1024` is 1024 bytes),
//!   Kubernetes quantities (`50m`, `100Mi`, `1.5Gi`, `1e3`) and percentages (`50%` is `0.5`);
//! * one variable, named after the resource (`cpu` in a CPU expression, `memory` in a memory expression): the
//!   combined value of the target containers.
//!
//! Values are exact fixed-point numbers in nano units held in 128 bits; products and quotients round up to the
//! next nano unit, as Kubernetes quantities do.

use kruise_inplace::quantity;

/// Nano units per base unit.
const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// The most tokens an expression may have. It bounds the depth of the parsed tree, and so the recursion of
/// parsing, evaluating and dropping it (upstream's Go parser has no limit, but Go stacks grow; a Rust thread's
/// does not). Real expressions such as `max(cpu*50%, 50m)` have about ten.
pub const MAX_TOKENS: usize = 256;

/// Why an expression cannot be parsed or evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExpressionError {
    /// The text is not an expression of the language.
    #[error("syntax error at byte {position}: {reason}")]
    Syntax {
        /// Byte offset of the offending token.
        position: usize,
        /// What was expected or found.
        reason: String,
    },
    /// A name other than the resource's own variable, `max` or `min`.
    #[error("unknown name {name:?} (the only variable is {variable:?})")]
    UnknownName {
        /// The name.
        name: String,
        /// The variable the expression may use.
        variable: String,
    },
    /// A number that is not a Kubernetes quantity.
    #[error("invalid number {text:?}: {reason}")]
    Number {
        /// The number as written.
        text: String,
        /// What the quantity parser said.
        reason: String,
    },
    /// More tokens than [`MAX_TOKENS`]: far beyond any real expression, and refused so that a hostile
    /// SidecarSet cannot nest an expression deep enough to overflow the stack of whoever parses it.
    #[error("the expression has more than {limit} tokens (numbers, names and symbols)")]
    TooLong {
        /// The limit, [`MAX_TOKENS`].
        limit: usize,
    },
    /// Division by zero.
    #[error("division by zero")]
    DivisionByZero,
    /// A value outside the representable range.
    #[error("value out of range")]
    Overflow,
    /// The result is negative.
    #[error("the result {0} is negative")]
    Negative(String),
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operator {
    Add,
    Subtract,
    Multiply,
    Divide,
}

/// `max` or `min`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Function {
    Max,
    Min,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Number(i128),
    Variable,
    Negate(Box<Node>),
    Binary(Operator, Box<Node>, Box<Node>),
    Call(Function, Vec<Node>),
}

/// A parsed expression over one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expression {
    root: Node,
}

impl Expression {
    /// Parses `text`, whose only variable is `variable` (`cpu` or `memory`).
    ///
    /// # Errors
    /// [`ExpressionError::Syntax`], [`ExpressionError::UnknownName`] or [`ExpressionError::Number`].
    pub fn parse(text: &str, variable: &str) -> Result<Self, ExpressionError> {
        let tokens = tokenize(text)?;
        let mut parser = Parser {
            tokens: &tokens,
            position: 0,
            end: text.len(),
            variable,
        };
        let root = parser.sum()?;
        if let Some((token, at)) = parser.peek() {
            return Err(syntax(at, format!("unexpected {}", token.describe())));
        }
        Ok(Self { root })
    }

    /// The value for the variable's value `variable_nanos` (nano units), in nano units.
    ///
    /// # Errors
    /// [`ExpressionError::DivisionByZero`], [`ExpressionError::Overflow`], or [`ExpressionError::Negative`]
    /// when the result is below zero.
    pub fn evaluate(&self, variable_nanos: i128) -> Result<i128, ExpressionError> {
        let value = evaluate(&self.root, variable_nanos)?;
        if value < 0 {
            return Err(ExpressionError::Negative(format_nanos(value)));
        }
        Ok(value)
    }
}

fn evaluate(node: &Node, variable: i128) -> Result<i128, ExpressionError> {
    Ok(match node {
        Node::Number(value) => *value,
        Node::Variable => variable,
        Node::Negate(inner) => evaluate(inner, variable)?
            .checked_neg()
            .ok_or(ExpressionError::Overflow)?,
        Node::Binary(operator, left, right) => {
            let left = evaluate(left, variable)?;
            let right = evaluate(right, variable)?;
            match operator {
                Operator::Add => left.checked_add(right).ok_or(ExpressionError::Overflow)?,
                Operator::Subtract => left.checked_sub(right).ok_or(ExpressionError::Overflow)?,
                Operator::Multiply => divide_rounding_up(
                    left.checked_mul(right).ok_or(ExpressionError::Overflow)?,
                    NANOS_PER_UNIT,
                )?,
                Operator::Divide => {
                    if right == 0 {
                        return Err(ExpressionError::DivisionByZero);
                    }
                    divide_rounding_up(
                        left.checked_mul(NANOS_PER_UNIT)
                            .ok_or(ExpressionError::Overflow)?,
                        right,
                    )?
                }
            }
        }
        Node::Call(function, arguments) => {
            let mut best: Option<i128> = None;
            for argument in arguments {
                let value = evaluate(argument, variable)?;
                best = Some(match (best, function) {
                    (None, _) => value,
                    (Some(known), Function::Max) => known.max(value),
                    (Some(known), Function::Min) => known.min(value),
                });
            }
            best.ok_or(ExpressionError::Overflow)?
        }
    })
}

/// `numerator / denominator`, rounded away from zero.
fn divide_rounding_up(numerator: i128, denominator: i128) -> Result<i128, ExpressionError> {
    let quotient = numerator
        .checked_div(denominator)
        .ok_or(ExpressionError::Overflow)?;
    let remainder = numerator
        .checked_rem(denominator)
        .ok_or(ExpressionError::Overflow)?;
    if remainder == 0 {
        return Ok(quotient);
    }
    let away = if (numerator < 0) == (denominator < 0) {
        1
    } else {
        -1
    };
    quotient.checked_add(away).ok_or(ExpressionError::Overflow)
}

/// A nano-unit value as a decimal number of base units, for messages.
fn format_nanos(value: i128) -> String {
    let sign = if value < 0 { "-" } else { "" };
    let magnitude = value.unsigned_abs();
    let units = magnitude / NANOS_PER_UNIT.unsigned_abs();
    let fraction = magnitude % NANOS_PER_UNIT.unsigned_abs();
    if fraction == 0 {
        format!("{sign}{units}")
    } else {
        let digits = format!("{fraction:09}");
        format!("{sign}{units}.{}", digits.trim_end_matches('0'))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Number(i128),
    Name(String),
    Symbol(char),
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Self::Number(value) => format!("number {}", format_nanos(*value)),
            Self::Name(name) => format!("name {name:?}"),
            Self::Symbol(symbol) => format!("{symbol:?}"),
        }
    }
}

fn syntax(position: usize, reason: String) -> ExpressionError {
    ExpressionError::Syntax { position, reason }
}

fn tokenize(text: &str) -> Result<Vec<(Token, usize)>, ExpressionError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if tokens.len() >= MAX_TOKENS && !byte.is_ascii_whitespace() {
            return Err(ExpressionError::TooLong { limit: MAX_TOKENS });
        }
        let start = at;
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' => at += 1,
            b'0'..=b'9' | b'.' => {
                while bytes
                    .get(at)
                    .is_some_and(|b| b.is_ascii_digit() || *b == b'.')
                {
                    at += 1;
                }
                let value = if bytes.get(at) == Some(&b'%') {
                    let number = text.get(start..at).unwrap_or_default();
                    at += 1;
                    let nanos = number_nanos(number)?;
                    divide_rounding_up(nanos, 100)?
                } else {
                    while bytes.get(at).is_some_and(u8::is_ascii_alphanumeric) {
                        at += 1;
                    }
                    number_nanos(text.get(start..at).unwrap_or_default())?
                };
                tokens.push((Token::Number(value), start));
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while bytes
                    .get(at)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    at += 1;
                }
                let name = text.get(start..at).unwrap_or_default().to_owned();
                tokens.push((Token::Name(name), start));
            }
            b'+' | b'-' | b'*' | b'/' | b'(' | b')' | b',' => {
                tokens.push((Token::Symbol(char::from(byte)), start));
                at += 1;
            }
            _ => {
                let found = text.get(start..).and_then(|rest| rest.chars().next());
                return Err(syntax(
                    start,
                    format!("unexpected character {:?}", found.unwrap_or('?')),
                ));
            }
        }
    }
    Ok(tokens)
}

fn number_nanos(text: &str) -> Result<i128, ExpressionError> {
    let parsed = quantity::parse(text).map_err(|error| ExpressionError::Number {
        text: text.to_owned(),
        reason: error.to_string(),
    })?;
    parsed.to_nanos().ok_or(ExpressionError::Overflow)
}

struct Parser<'a> {
    tokens: &'a [(Token, usize)],
    position: usize,
    end: usize,
    variable: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<(&Token, usize)> {
        self.tokens
            .get(self.position)
            .map(|(token, at)| (token, *at))
    }

    fn next_symbol_is(&self, symbol: char) -> bool {
        matches!(self.peek(), Some((Token::Symbol(found), _)) if *found == symbol)
    }

    fn expect(&mut self, symbol: char) -> Result<(), ExpressionError> {
        match self.peek() {
            Some((Token::Symbol(found), _)) if *found == symbol => {
                self.position += 1;
                Ok(())
            }
            Some((token, at)) => Err(syntax(
                at,
                format!("expected {symbol:?}, found {}", token.describe()),
            )),
            None => Err(syntax(
                self.end,
                format!("expected {symbol:?}, found the end"),
            )),
        }
    }

    fn sum(&mut self) -> Result<Node, ExpressionError> {
        let mut left = self.product()?;
        loop {
            let operator = if self.next_symbol_is('+') {
                Operator::Add
            } else if self.next_symbol_is('-') {
                Operator::Subtract
            } else {
                return Ok(left);
            };
            self.position += 1;
            let right = self.product()?;
            left = Node::Binary(operator, Box::new(left), Box::new(right));
        }
    }

    fn product(&mut self) -> Result<Node, ExpressionError> {
        let mut left = self.factor()?;
        loop {
            let operator = if self.next_symbol_is('*') {
                Operator::Multiply
            } else if self.next_symbol_is('/') {
                Operator::Divide
            } else {
                return Ok(left);
            };
            self.position += 1;
            let right = self.factor()?;
            left = Node::Binary(operator, Box::new(left), Box::new(right));
        }
    }

    fn factor(&mut self) -> Result<Node, ExpressionError> {
        let Some((token, at)) = self.peek() else {
            return Err(syntax(
                self.end,
                "expected a value, found the end".to_owned(),
            ));
        };
        let token = token.clone();
        self.position += 1;
        match token {
            Token::Number(value) => Ok(Node::Number(value)),
            Token::Symbol('-') => Ok(Node::Negate(Box::new(self.factor()?))),
            Token::Symbol('+') => self.factor(),
            Token::Symbol('(') => {
                let inner = self.sum()?;
                self.expect(')')?;
                Ok(inner)
            }
            Token::Name(name) if name == self.variable => Ok(Node::Variable),
            Token::Name(name) if name == "max" || name == "min" => {
                let function = if name == "max" {
                    Function::Max
                } else {
                    Function::Min
                };
                self.expect('(')?;
                let mut arguments = vec![self.sum()?];
                while self.next_symbol_is(',') {
                    self.position += 1;
                    arguments.push(self.sum()?);
                }
                self.expect(')')?;
                Ok(Node::Call(function, arguments))
            }
            Token::Name(name) => Err(ExpressionError::UnknownName {
                name,
                variable: self.variable.to_owned(),
            }),
            Token::Symbol(_) => Err(syntax(
                at,
                format!("expected a value, found {}", token.describe()),
            )),
        }
    }
}
