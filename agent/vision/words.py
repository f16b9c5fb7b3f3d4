"""What the words on a game's screen mean: ways on, things never to tap, outcomes, levels,
countdowns.

A button's words are judged by meaning, in several forms each ("Next", "Continue", "Tap to
continue"; "No thanks", "Not now", "Later"), not by one game's list. The forbidden spend
money or act for the user (a price, Buy, Install, Watch an ad, Share, Invite, Rate) or give
up the level (Quit, Give up, Exit, Leave: a card offering those also offers Retry or Continue).
"""

from __future__ import annotations

import re
from typing import Literal

Meaning = Literal["forward", "retry", "close", "decline"]

# Ways on, by what they do. "forward" goes on (the next level, play, collect); "retry"
# plays the level again; "close" and "decline" dismiss (an X, No thanks).
SAFE: dict[str, Meaning] = {
    "next": "forward", "continue": "forward", "tap to continue": "forward", "touch to continue": "forward",
    "ok": "forward", "okay": "forward", "got it": "forward", "collect": "forward", "claim": "forward",
    "claim reward": "forward", "collect reward": "forward", "resume": "forward", "keep playing": "forward",
    "play on": "forward", "play": "forward", "start": "forward", "let's go": "forward", "lets go": "forward", "let s go": "forward",
    "go": "forward", "done": "forward", "yes": "forward",
    "retry": "retry", "try again": "retry", "play again": "retry", "replay": "retry", "restart": "retry",
    "close": "close", "x": "close", "×": "close", "✕": "close", "✖": "close", "back": "close",
    "no thanks": "decline", "later": "decline", "maybe later": "decline", "not now": "decline", "skip": "decline",
    "cancel": "decline", "dismiss": "decline", "no": "decline",
}  # fmt: skip
# Of the safe, the preferred first: going on, then playing again, then dismissing.
PREFERENCE: dict[Meaning, int] = {"forward": 0, "retry": 1, "close": 2, "decline": 3}
FILLER = {"tap", "to", "the", "level", "now", "game", "on", "again", "it", "thanks", "no", "not", "maybe", "reward",
          "here", "please", "free"}  # fmt: skip

FORBIDDEN_WORDS: dict[str, str] = {
    "buy": "buys", "purchase": "buys", "pay": "pays", "subscribe": "subscribes", "subscription": "subscribes",
    "share": "shares", "brag": "shares", "invite": "invites friends", "install": "installs an app",
    "download": "installs an app", "rate": "rates the game", "watch": "watches an ad", "ad": "watches an ad",
    "ads": "watches an ad", "video": "watches an ad", "trial": "starts a trial", "store": "opens a store",
    "shop": "opens the shop", "vip": "buys", "premium": "buys", "get": "gets something (a purchase or an install)",
    "quit": "gives up the level", "exit": "gives up the level", "leave": "gives up the level",
    "usd": "a price", "eur": "a price", "gbp": "a price", "jpy": "a price", "inr": "a price", "krw": "a price",
    "rub": "a price", "coins": "spends coins", "gems": "spends gems",
}  # fmt: skip
FORBIDDEN_PHRASES: dict[str, str] = {
    "give up": "gives up the level", "end level": "gives up the level", "end game": "gives up the level",
    "play now": "an ad's install button", "install now": "installs an app",
}  # fmt: skip
# An ad's own button: what installs the advertised app.
INSTALL = {"install", "download", "get", "play now", "install now", "open"}

# A price: a currency sign next to a number, a number with two decimals, a currency code.
PRICE = re.compile(r"[$€£¥₹₩]|\d+[.,]\d\d\b|\b(usd|eur|gbp|jpy)\b", re.IGNORECASE)
NUMBER = re.compile(r"\d+")
# Words a number after which names a thing rather than pricing it ("Level 12", "Play 12").
NAMING = {"level", "lvl", "lv", "stage", "play", "start", "go", "day", "score", "of", "x"}
# Ways on a level's number may follow ("Play 12", "Let's go 3"): they start that level.
STARTS = ("play", "level", "start", "go", "let's go", "lets go", "let s go")
# A number glued to the word before it, as OCR reads a bold button ("go3", "Play12").
GLUED = re.compile(r"\b([a-z']{2,})(\d{1,4})\b")
# A header's labels: "MOVES 12" on a badge is a count, not a price.
HUD = {"moves", "time", "goal", "target", "stars", "score", "level", "coins", "lives"}
LEVEL = re.compile(r"\b(?:level|lvl|lv|stage)\s*\.?\s*(\d{1,4})\b", re.IGNORECASE)
SAYS_COUNTDOWN = re.compile(r"\b(?:close|skip)\s*in\s*(\d{1,2})\s*(?:s|sec|secs|seconds)?\b")
COUNTDOWN = re.compile(r"^(?:(?:close|skip|reward)\s*(?:in)?\s*)?(\d{1,2})\s*(?:s|sec|secs|seconds)?$", re.IGNORECASE)

WON = ("level complete", "complete", "completed", "well done", "you win", "you won", "victory", "sweet", "great",
       "cleared", "passed", "amazing", "excellent", "awesome", "fantastic", "stage clear")  # fmt: skip
LOST = ("failed", "fail", "out of moves", "no more moves", "try again", "you lost", "you lose", "oh no", "game over",
        "keep going", "extra moves", "more moves", "retry", "defeat")  # fmt: skip
GOALS = ("collect", "break", "reach", "score", "target", "goal", "clear", "free", "points")


def norm(text: str) -> str:
    """Lower case, letters, digits, prices and the X glyphs; punctuation specks dropped."""
    t = text.lower().replace("×", " × ").replace("✕", " ✕ ").replace("’", "'")
    t = re.sub(r"[^\w$€£¥₹₩×✕✖.,+'? ]|_", " ", t)
    return " ".join(tok for tok in t.split() if re.search(r"[\w$€£¥₹₩×✕✖]", tok.replace("_", ""))).strip(" .,")


def unglued(text: str) -> str:
    """The text normalised, a number glued to the word before it set apart ("go3": "go 3")."""
    return GLUED.sub(r"\1 \2", norm(text))


def _phrases(words: list[str]) -> list[str]:
    """The words of a text as the longest known phrases ("tap to continue", "no thanks")."""
    out: list[str] = []
    i = 0
    while i < len(words):
        for n in (3, 2, 1):
            phrase = " ".join(words[i : i + n])
            if len(words) - i >= n and (phrase in SAFE or phrase in FORBIDDEN_PHRASES or n == 1):
                out.append(phrase)
                i += n
                break
    return out


def forbidden_why(text: str, on_button: bool = False) -> str | None:
    """Why the text marks a button never to tap (a price, Buy, Install...), or None.
    `on_button`: the text is a button's, where words followed by a number are sold for it."""
    t = unglued(text).replace("?", " ").replace("'", " ")
    m = PRICE.search(t)
    if m:
        return f"a price: {text.strip()!r}"
    words = t.split()
    if squash(t) in SQUASHED_FORBIDDEN:
        return f"{text.strip()!r} {SQUASHED_FORBIDDEN[squash(t)]}"
    for phrase in _phrases(words):
        if phrase in FORBIDDEN_PHRASES:
            return f"{phrase!r} {FORBIDDEN_PHRASES[phrase]}"
        if phrase in FORBIDDEN_WORDS:
            return f"{phrase!r} {FORBIDDEN_WORDS[phrase]}"
    if on_button and len(words) >= 2 and NUMBER.fullmatch(words[-1]) and int(words[-1]) >= 10 \
            and any(w.isalpha() for w in words[:-1]) and words[-2] not in NAMING and squash(words[-2]) not in SQUASHED_STARTS \
            and not (len(words) == 2 and words[0] in HUD):  # fmt: skip
        # "+5 moves 900", "Booster 500": words with a number after them are sold for it
        return f"a price: {text.strip()!r} ends in a number"
    return None


def squash(text: str) -> str:
    """A text without its spaces and apostrophes: OCR often drops both on a bold button
    ("Let's go" read as "Letsgo", "No thanks" as "Nothanks")."""
    return re.sub(r"[\s']", "", text)


# the phrases of several words, squashed (one word alone is matched as it is)
SQUASHED_SAFE: dict[str, Meaning] = {squash(k): v for k, v in SAFE.items() if len(squash(k)) >= 5}
SQUASHED_FORBIDDEN: dict[str, str] = {squash(k): v for k, v in FORBIDDEN_PHRASES.items()}
SQUASHED_STARTS = {squash(k) for k in STARTS}


def safe_meaning(text: str) -> Meaning | None:
    """What a way-on button does, or None when the text is not one: every word must be a
    safe word or a filler, and one at least safe."""
    t = unglued(text).replace("?", "")
    if not t:
        return None
    if t in SAFE:
        return SAFE[t]
    if squash(t) in SQUASHED_SAFE:
        return SQUASHED_SAFE[squash(t)]
    meanings: list[Meaning] = []
    prev = ""
    for phrase in _phrases(t.split()):
        if phrase in SAFE:
            meanings.append(SAFE[phrase])
        elif squash(phrase) in SQUASHED_SAFE:  # ("Letsgo 12": the phrase's words run together)
            meanings.append(SQUASHED_SAFE[squash(phrase)])
        elif not (phrase in FILLER or (phrase.isdigit() and squash(prev) in SQUASHED_STARTS)):
            return None  # ("Play 12" plays level 12; "Play on for 900" is no plain way on)
        prev = phrase
    if not meanings:
        return None
    best = meanings[0]
    for m in meanings[1:]:
        if PREFERENCE[m] < PREFERENCE[best]:
            best = m
    return best


def started_level(text: str) -> int | None:
    """The level a way on names ("Play 12", "Let's go 3"), or None."""
    t = unglued(text).replace("?", "")
    words = t.split()
    if len(words) >= 2 and words[-1].isdigit() and len(words[-1]) <= 4 and safe_meaning(t) == "forward" \
            and squash(" ".join(words[:-1])).endswith(tuple(SQUASHED_STARTS)):  # fmt: skip
        return int(words[-1])
    return None


def is_install(text: str) -> bool:
    """An ad's own button: Install, Download, Get, Play now."""
    t = norm(text)
    tokens = t.split()
    if tokens[:1] == ["get"] and len(tokens) <= 2 and not PRICE.search(t):
        return True  # ("Get" and a speck read beside it)
    return t in INSTALL or names_install(t) or _has(t, ("play now", "install now"))


# A level's move counter: the board's header ("Moves 25", "STEPS 25", "25 moves left").
COUNTER_WORDS = ("moves", "steps")


def move_counter(text: str) -> bool:
    """A move counter's words: a moves label beside a number."""
    tokens = norm(text).split()
    return any(t in COUNTER_WORDS and any(NUMBER.fullmatch(o) for o in tokens[max(0, i - 1) : i + 2] if o != t)
               for i, t in enumerate(tokens))  # fmt: skip


def names_install(text: str) -> bool:
    """A button that can only install an app: Install, Download (not "Get" or "Open",
    which a game's own offers say too)."""
    return any(w in ("install", "download") for w in norm(text).split())


def explicit_countdown(text: str) -> bool:
    """A countdown that says so ("Close in 5", "Skip in 5s", "5s"), not a lone number."""
    t = norm(text)
    return countdown(t) is not None and not t.isdigit()


def countdown(text: str) -> int | None:
    """The seconds a countdown shows ("5", "Close in 5", "Skip in 5s"), or None."""
    t = norm(text).replace("?", "").strip()
    m = COUNTDOWN.match(t) or SAYS_COUNTDOWN.search(t)  # (two readings of one pill: "Close Close in 4")
    return int(m.group(1)) if m else None


def level_of(texts: list[str]) -> int | None:
    """The level number a card shows ("Level 7", "Lv. 7"), the first found."""
    for t in texts:
        m = LEVEL.search(t)
        if m:
            return int(m.group(1))
    return None


def _has(text: str, phrases: tuple[str, ...]) -> bool:
    return any(re.search(rf"(?<![a-z]){re.escape(p)}(?![a-z])", text) for p in phrases)


def outcome_of(texts: list[str]) -> Literal["won", "lost"] | None:
    """Whether the card's words say the level was won or lost (a loss wins a tie: a card
    saying "Great try! Level failed" lost)."""
    t = " ".join(norm(x) for x in texts)
    if _has(t, LOST):
        return "lost"
    if _has(t, WON):
        return "won"
    return None


def has_goal(texts: list[str]) -> bool:
    t = " ".join(norm(x) for x in texts)
    return _has(t, GOALS)
