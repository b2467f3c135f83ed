"""Negation flips in the style of paper 000's DSTC7-ADV ("can" -> "can not").

One flip per declarative sentence: the first auxiliary, copula or simple verb
of the sentence's main clause is negated ("is" -> "is not", "has made" ->
"has not made", "he has a show" -> "he does not have a show", "i like" -> "i
do not like"), or its negation is removed ("is not" / "isn't" / "is n't" ->
"is", "can't" -> "can", "don't watch" -> "do watch", "never seen" -> "seen").

The rules prefer precision to recall; a sentence is left alone when

* it is a question (ends in "?", starts with an auxiliary or a wh-word);
* the auxiliary has no subject before it (imperatives, inverted questions);
* the place lies inside double quotes or after a subordinator ("if", "that",
  "who", ...), where a flip would not invert the main clause;
* a flip would double a negation ("there will be no ..." -> "will not be no")
  or strand a negative-polarity word ("haven't been either" -> "have been
  either");
* a word is ambiguous in a way a regular expression cannot settle ("'d", "have"
  followed by neither a participle nor a noun phrase, "do" as a main verb).

English only; the tokenised form of the USR data ("is n't", "ca n't",
"do nt", "they 're") is read like ordinary text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .edits import Edit, Proposals, detect_language, make_edit, match_case

KIND = "negation"

_TOKEN = re.compile(
    r"""
    n['’]t(?![A-Za-z])                   # n't, split off ("is n't") or attached
  | [A-Za-z]+(?=n['’]t(?![A-Za-z]))      # the auxiliary of "isn't", "can't" (-> "ca")
  | ['’][A-Za-z]+                        # 's 're 've 'll 'd 'm
  | [A-Za-z]+(?:-[A-Za-z]+)*
  | \d+(?:[.,]\d+)*
  | \S
    """,
    re.X,
)


@dataclass(frozen=True)
class _Tok:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower().replace("’", "'")


BE = {"is", "are", "was", "were", "am"}
BE_CONTRACTED = {"'s", "'re", "'m"}
MODALS = {"can", "could", "will", "would", "shall", "should", "may", "might", "must"}
DO = {"do", "does", "did"}
HAVE = {"has", "have", "had"}
NEGATIVE_AUX_STEMS = {"ca": "can", "wo": "will", "sha": "shall"}
AUXILIARIES = BE | MODALS | DO | HAVE | {"need"}
NEGATORS_AFTER_AUX = {"not", "n't", "nt", "never"}
# Words that already negate a clause: adding "not" would double the negation.
NEGATIVE_WORDS = {"no", "not", "n't", "nt", "never", "nothing", "nobody", "none", "nowhere",
                  "neither", "nor", "cannot", "without"}
# Words that need a negation to stay grammatical ("I haven't been there either").
NEGATIVE_POLARITY = {"any", "anyone", "anything", "anybody", "anywhere", "either", "yet", "ever"}
# Words a negation turns awkward ("does not have some great places", "is not there already").
POSITIVE_POLARITY = {"some", "somewhat", "already"}
# After these an inserted "not" would leave an ungrammatical ellipsis ("I can not too").
ELLIPSIS_WORDS = {"too", "either", "neither"}
# "not" goes after these sentence adverbs: "can also not play", "is probably not".
ADVERBS_BEFORE_NOT = {"also", "still", "probably", "definitely", "certainly", "actually",
                      "obviously", "clearly", "surely", "apparently"}
ADVERBS_AFTER_HAVE = {"just", "also", "really", "recently", "finally", "actually", "always"}

SUBJECT_PLAIN = {"i", "you", "we", "they"}
SUBJECT_3SG = {"he", "she", "it"}
S_CONTRACTION_HOSTS = {"it", "he", "she", "that", "there", "here", "this", "everything",
                       "everyone", "something", "someone"}
DETERMINERS = {"a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her",
               "its", "our", "their", "some", "many", "much", "lots", "alot", "several",
               "every", "each", "enough", "more", "free", "good", "ill", "two", "three",
               "four", "five", "six", "seven", "eight", "nine", "ten", "one"}
PREPOSITIONS = {"in", "of", "on", "at", "by", "for", "from", "with", "since", "until",
                "during", "about", "into", "early", "late", "mid", "last", "next"}
SUBORDINATORS = {"if", "when", "whenever", "while", "whilst", "although", "though", "because",
                 "since", "unless", "until", "till", "whether", "before", "after", "once", "as",
                 "whereas", "where", "wherever", "what", "whatever", "which", "who", "whom",
                 "whose", "why", "how", "than"}
WH_QUESTION_START = {"what", "who", "why", "how", "which", "where", "whose", "whom"}
CLAUSE_BOUNDARIES = {",", ";", ":", "(", ")", "-", "—", "–", "and", "but", "or"}
SENTENCE_ENDS = {".", "!", "?"}
# Words that may open a declarative sentence before its subject.
INTERJECTIONS = {"yes", "yeah", "yep", "no", "nope", "oh", "ah", "well", "so", "and", "but",
                 "ok", "okay", "wow", "lol", "haha", "hmm", "right", "true", "sure", "really",
                 "anyway", "anyways", "hey", "hi", "hello", "nice", "cool", "great", "agreed",
                 "absolutely", "interesting", "huh", "man", "also", "plus", "then", "now",
                 "honestly", "actually", "definitely", "indeed", "exactly"}

# base -> (third person singular, past); verbs safe to negate with do-support
# after a subject pronoun.
LEXICAL_VERBS: dict[str, tuple[str, str]] = {
    "like": ("likes", "liked"), "love": ("loves", "loved"), "hate": ("hates", "hated"),
    "enjoy": ("enjoys", "enjoyed"), "know": ("knows", "knew"), "think": ("thinks", "thought"),
    "believe": ("believes", "believed"), "want": ("wants", "wanted"),
    "need": ("needs", "needed"), "watch": ("watches", "watched"), "play": ("plays", "played"),
    "listen": ("listens", "listened"), "prefer": ("prefers", "preferred"),
    "remember": ("remembers", "remembered"), "agree": ("agrees", "agreed"),
    "understand": ("understands", "understood"), "follow": ("follows", "followed"),
    "support": ("supports", "supported"), "care": ("cares", "cared"), "own": ("owns", "owned"),
    "live": ("lives", "lived"), "work": ("works", "worked"), "eat": ("eats", "ate"),
    "drink": ("drinks", "drank"), "use": ("uses", "used"), "buy": ("buys", "bought"),
    "feel": ("feels", "felt"), "get": ("gets", "got"), "make": ("makes", "made"),
    "find": ("finds", "found"), "trust": ("trusts", "trusted"), "miss": ("misses", "missed"),
    "recall": ("recalls", "recalled"), "go": ("goes", "went"), "see": ("sees", "saw"),
    "hear": ("hears", "heard"), "tend": ("tends", "tended"),
    "recommend": ("recommends", "recommended"), "appreciate": ("appreciates", "appreciated"),
    "mind": ("minds", "minded"),
}
_VERB_FORMS: dict[str, tuple[str, str]] = {}
for _base, (_third, _past) in LEXICAL_VERBS.items():
    _VERB_FORMS[_base] = (_base, "plain")
    _VERB_FORMS[_third] = (_base, "3sg")
    _VERB_FORMS[_past] = (_base, "past")

IRREGULAR_PARTICIPLES = {
    "been", "done", "gone", "seen", "made", "had", "heard", "known", "said", "told", "got",
    "gotten", "given", "taken", "written", "read", "thought", "found", "felt", "kept", "left",
    "lost", "met", "paid", "put", "run", "sent", "set", "spent", "stood", "understood", "won",
    "become", "come", "begun", "brought", "bought", "caught", "taught", "sold", "eaten",
    "drunk", "driven", "chosen", "fallen", "forgotten", "spoken", "broken", "stolen", "shown",
    "grown", "thrown", "flown", "drawn", "worn", "hit", "let", "cut", "quit", "built", "meant",
    "held", "led", "fed", "slept", "sung", "swum", "ridden", "risen", "hidden", "proven",
    "beaten", "dealt",
}
NOT_PARTICIPLES = {"need", "indeed", "hundred", "speed", "seed", "feed", "breed", "bleed",
                   "greed", "bed", "red", "shed", "wed", "naked", "wicked", "sacred", "weed",
                   "tweed", "embed", "steed", "creed", "deed", "sled", "shred"}


def _is_participle(word: str) -> bool:
    if word in IRREGULAR_PARTICIPLES:
        return True
    return len(word) >= 5 and word.endswith("ed") and word not in NOT_PARTICIPLES


@dataclass
class _Sentence:
    tokens: list[_Tok]
    question: bool


@dataclass(frozen=True)
class _Flip:
    start: int
    end: int
    replacement: str


class _Reject(Exception):
    """A place that looks negatable but is not safe; the message is the skip reason."""


def tokenize(text: str) -> list[_Tok]:
    return [_Tok(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _sentences(text: str, tokens: list[_Tok]) -> list[_Sentence]:
    out: list[_Sentence] = []
    current: list[_Tok] = []
    question = False
    closing = False
    for i, tok in enumerate(tokens):
        line_break = i > 0 and "\n" in text[tokens[i - 1].end:tok.start]
        if current and (line_break or (closing and tok.text not in SENTENCE_ENDS)):
            out.append(_Sentence(current, question))
            current, question, closing = [], False, False
        current.append(tok)
        if tok.text in SENTENCE_ENDS:
            closing = True
            question = question or tok.text == "?"
    if current:
        out.append(_Sentence(current, question))
    return out


def _quoted_ranges(text: str) -> list[tuple[int, int]]:
    ranges = []
    straight = [m.start() for m in re.finditer('"', text)]
    ranges += [(straight[i], straight[i + 1]) for i in range(0, len(straight) - 1, 2)]
    ranges += [(m.start(), m.end()) for m in re.finditer("“[^”]*”", text)]
    return ranges


def flip_negations(text: str, *, language: str | None = None) -> Proposals:
    """Every safe negation flip of ``text``, one per declarative sentence."""
    if not text.strip():
        return Proposals.skipped(KIND, "empty reply")
    if (language or detect_language(text)) != "en":
        return Proposals.skipped(KIND, "negation flips support English only")
    tokens = tokenize(text)
    quoted = _quoted_ranges(text)
    edits: list[Edit] = []
    reasons: list[str] = []
    for sentence in _sentences(text, tokens):
        try:
            flip = _flip_sentence(sentence, quoted)
        except _Reject as why:
            reasons.append(str(why))
            continue
        if flip is None:
            continue
        edits.append(make_edit(KIND, text, flip.start, flip.end, flip.replacement, site=len(edits)))
    if edits:
        return Proposals.of(KIND, edits, "no safe negation flip")
    if not reasons:
        return Proposals.skipped(KIND, "no auxiliary, copula or negation to flip")
    # The most frequent reason, first-seen order breaking ties.
    return Proposals.skipped(KIND, max(reasons, key=reasons.count))


def _content_start(tokens: list[_Tok]) -> int:
    """Index of the first token that is neither punctuation nor an interjection."""
    for i, tok in enumerate(tokens):
        if tok.low in INTERJECTIONS or not tok.text[0].isalnum() and not tok.low.startswith("'"):
            continue
        return i
    return len(tokens)


def _flip_sentence(sentence: _Sentence, quoted: list[tuple[int, int]]) -> _Flip | None:
    tokens = sentence.tokens
    first = _content_start(tokens)
    if sentence.question:
        raise _Reject("question")
    if first < len(tokens):
        opener = tokens[first].low
        if opener in WH_QUESTION_START:
            raise _Reject("question")
        if opener in AUXILIARIES or opener in NEGATIVE_AUX_STEMS or opener == "cannot":
            raise _Reject("question or imperative (no subject before the auxiliary)")
    rejection: _Reject | None = None
    for i in range(len(tokens)):
        try:
            flip = _flip_at(tokens, i, quoted)
        except _Reject as why:
            # A subordinate or quoted place does not end the search: the main
            # clause may come later ("if it rains , we will stay").
            rejection = rejection or why
            continue
        if flip is not None:
            return flip
    if rejection is not None:
        raise rejection
    return None


def _segment_start(tokens: list[_Tok], i: int) -> int:
    j = i
    while j > 0 and tokens[j - 1].low not in CLAUSE_BOUNDARIES:
        j -= 1
    return j


def _check_main_clause(tokens: list[_Tok], i: int, quoted: list[tuple[int, int]]) -> None:
    tok = tokens[i]
    if any(a < tok.start < b for a, b in quoted):
        raise _Reject("only inside quoted text")
    seg = _segment_start(tokens, i)
    while seg < i and tokens[seg].low in INTERJECTIONS:
        seg += 1
    if seg == i:
        raise _Reject("question or imperative (no subject before the auxiliary)")
    for j in range(seg, i):
        word = tokens[j].low
        if word in SUBORDINATORS or (word == "that" and j > seg):
            raise _Reject("only in a subordinate clause")
        if word == "to" and j == i - 1:
            raise _Reject("only in an infinitive")


def _rest_of(tokens: list[_Tok], i: int, *, sentence: bool = False) -> list[str]:
    out = []
    for tok in tokens[i:]:
        if not sentence and tok.low in CLAUSE_BOUNDARIES:
            break
        out.append(tok.low)
    return out


def _next_word(tokens: list[_Tok], i: int) -> str:
    return tokens[i + 1].low if i + 1 < len(tokens) else ""


def _flip_at(tokens: list[_Tok], i: int, quoted: list[tuple[int, int]]) -> _Flip | None:
    tok = tokens[i]
    word = tok.low
    prev = tokens[i - 1].low if i > 0 else ""
    nxt = _next_word(tokens, i)

    if word == "cannot":
        _check_main_clause(tokens, i, quoted)
        _check_no_polarity_item(tokens, i + 1)
        return _Flip(tok.start, tok.end, match_case(tok.text, "can"))

    is_aux = word in AUXILIARIES or word in NEGATIVE_AUX_STEMS or _is_contracted_aux(word, prev)
    if is_aux and nxt in NEGATORS_AFTER_AUX and word not in {"need"}:
        _check_main_clause(tokens, i, quoted)
        _check_no_polarity_item(tokens, i + 2)
        if word in NEGATIVE_AUX_STEMS:  # "can't" -> "can", "won't" -> "will"
            positive = match_case(tok.text, NEGATIVE_AUX_STEMS[word])
        else:
            positive = tok.text
        return _Flip(tok.start, tokens[i + 1].end, positive)

    if word == "never" and i > 0 and prev.isalpha() and prev not in AUXILIARIES \
            and i + 1 < len(tokens) and tokens[i + 1].text.isalpha():
        _check_main_clause(tokens, i, quoted)
        _check_no_polarity_item(tokens, i + 1)
        return _Flip(tok.start, tokens[i + 1].end, tokens[i + 1].text)

    if word in BE or word in MODALS or (word in BE_CONTRACTED and _is_contracted_aux(word, prev)):
        if word in MODALS and (prev in DETERMINERS or prev in PREPOSITIONS):
            return None  # "a can of", "free will", "in may": not an auxiliary
        if word in MODALS and nxt in {"rather", "better"}:
            return None
        _check_main_clause(tokens, i, quoted)
        return _insert_not(tokens, i)

    if word in {"'ll", "'ve", "'d"} and prev in SUBJECT_PLAIN | SUBJECT_3SG | {"there", "that"}:
        _check_main_clause(tokens, i, quoted)
        return _expand_contraction(tokens, i)

    if word in HAVE:
        _check_main_clause(tokens, i, quoted)
        return _negate_have(tokens, i)

    if word in DO:
        if nxt in LEXICAL_VERBS:  # emphatic or auxiliary "do": "i do like it"
            _check_main_clause(tokens, i, quoted)
            _check_no_negation_after(tokens, i + 1)
            return _Flip(tok.start, tok.end, tok.text + " not")
        return None

    if word in _VERB_FORMS and prev in SUBJECT_PLAIN | SUBJECT_3SG:
        return _do_support(tokens, i, quoted)
    return None


def _is_contracted_aux(word: str, prev: str) -> bool:
    if word == "'s":
        return prev in S_CONTRACTION_HOSTS
    return word in {"'re", "'m", "'ll", "'ve", "'d"}


def _check_no_negation_after(tokens: list[_Tok], i: int) -> None:
    rest = _rest_of(tokens, i)
    if rest and rest[0] in ELLIPSIS_WORDS:
        raise _Reject("elliptical clause ('too', 'either')")
    if any(w in NEGATIVE_WORDS for w in rest):
        raise _Reject("clause is already negated; a flip would double the negation")
    words = [w for w in rest if w[0].isalnum()]
    if any(w in POSITIVE_POLARITY for w in words) or (words and words[-1] == "too"):
        raise _Reject("a positive-polarity word ('some', 'already', a final 'too') resists the negation")


def _check_no_polarity_item(tokens: list[_Tok], i: int) -> None:
    rest = _rest_of(tokens, i, sentence=True)
    if any(w in NEGATIVE_POLARITY for w in rest) or _has_at_all(rest):
        raise _Reject("a negative-polarity word ('any', 'either', 'yet') needs the negation")


def _has_at_all(words: list[str]) -> bool:
    return any(a == "at" and b == "all" for a, b in zip(words, words[1:]))


def _insert_not(tokens: list[_Tok], i: int) -> _Flip:
    """Be-forms and modals: "is" -> "is not", "can also" -> "can also not"."""
    _check_no_negation_after(tokens, i + 1)
    tok = tokens[i]
    if i + 1 < len(tokens) and tokens[i + 1].low in ADVERBS_BEFORE_NOT:
        adverb = tokens[i + 1]
        return _Flip(adverb.start, adverb.end, adverb.text + " not")
    return _Flip(tok.start, tok.end, tok.text + " not")


def _expand_contraction(tokens: list[_Tok], i: int) -> _Flip:
    """"they'll" -> "they will not", "i 've seen" -> "i have not seen"."""
    tok, host = tokens[i], tokens[i - 1]
    _check_no_negation_after(tokens, i + 1)
    following = _next_word(tokens, i)
    if tok.low == "'ll":
        full = "will"
    elif tok.low == "'ve":
        if not _is_participle(following):
            raise _Reject("'ve not followed by a participle")
        full = "have"
    else:  # 'd: "had" before a participle, "would" before a bare verb
        if following in {"like", "love", "say", "be", "rather", "prefer", "go", "think", "want",
                         "imagine", "guess", "bet", "have", "recommend", "consider"}:
            full = "would"
        elif _is_participle(following) and following not in {"like", "love"}:
            full = "had"
        else:
            raise _Reject("ambiguous 'd")
        if following == "rather":
            raise _Reject("'would rather' has no plain negation")
    return _Flip(host.start, tok.end, f"{host.text} {full} not")


def _negate_have(tokens: list[_Tok], i: int) -> _Flip | None:
    tok = tokens[i]
    j = i + 1
    while j < len(tokens) and tokens[j].low in ADVERBS_AFTER_HAVE:
        j += 1
    following = tokens[j].low if j < len(tokens) else ""
    if following in {"already", "still"}:
        raise _Reject("a positive-polarity word ('some', 'already', a final 'too') resists the negation")
    if _is_participle(following):
        _check_no_negation_after(tokens, i + 1)
        return _Flip(tok.start, tok.end, tok.text + " not")
    if j == i + 1 and (following == "to" or following in DETERMINERS or following.isdigit()):
        _check_no_negation_after(tokens, i + 1)
        do_form = {"has": "does", "had": "did", "have": "do"}[tok.low]
        return _Flip(tok.start, tok.end, match_case(tok.text, f"{do_form} not have"))
    if following in NEGATIVE_WORDS:
        raise _Reject("clause is already negated; a flip would double the negation")
    raise _Reject("'have' used in a way the rules cannot tell apart")


def _do_support(tokens: list[_Tok], i: int, quoted: list[tuple[int, int]]) -> _Flip | None:
    """"i like it" -> "i do not like it", "he knew" -> "he did not know"."""
    tok, subject = tokens[i], tokens[i - 1].low
    base, form = _VERB_FORMS[tok.low]
    if subject == "you" and base == "know":
        return None  # "you know" is a discourse marker, not a claim
    if form == "plain" and subject not in SUBJECT_PLAIN:
        return None
    if form == "3sg" and subject not in SUBJECT_3SG:
        return None
    _check_main_clause(tokens, i, quoted)
    _check_no_negation_after(tokens, i + 1)
    do_form = {"plain": "do", "3sg": "does", "past": "did"}[form]
    return _Flip(tok.start, tok.end, match_case(tok.text, f"{do_form} not {base}"))
