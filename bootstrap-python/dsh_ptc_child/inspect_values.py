"""The program-visible `inspect(*values)`: strings print raw, everything else as repr() (no
depth or length limits; cycles show as [...] / {...}). One call is one text group ending in a
newline. Registered Images that repr() reaches, directly or nested, render as
`[Image <id> <w>x<h>]` and split the group there: the text before it, then an `image` entry,
then the rest, in argument order."""

import os

from . import images


def _render_pieces(value):
    if type(value) is str:
        return [value]
    nonce = os.urandom(8).hex()
    found = []

    def stand_in(image):
        found.append(image)
        return f'\ue000{nonce}:{len(found) - 1}\ue001'

    saved = images.collector
    images.collector = stand_in
    try:
        text = repr(value)
    finally:
        images.collector = saved
    if not found:
        return [text]
    import re  # only once an Image was reached
    pieces, last = [], 0
    for match in re.finditer(f'\ue000{nonce}:(\\d+)\ue001', text):
        image = found[int(match.group(1))]
        pieces += [text[last:match.start()] + images.image_label(image), image]
        last = match.end()
    pieces.append(text[last:])
    return pieces


def create_inspect(emit_text, emit_image):
    def inspect(*values):
        pieces = []

        def flush():
            text = ''
            for piece in pieces:
                if isinstance(piece, str):
                    text += piece
                    continue
                if text:
                    emit_text(text)
                text = ''
                emit_image(piece)
            emit_text(text + '\n')

        try:
            for i, value in enumerate(values):
                rendered = _render_pieces(value)
                if i > 0:
                    pieces.append(' ')
                pieces.extend(rendered)
        except BaseException:
            if pieces:  # the arguments rendered before the failing one stay visible
                flush()
            raise
        flush()

    return inspect
