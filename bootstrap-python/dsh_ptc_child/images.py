"""Registered images. The host announces each attachment (`image-register` frames or the run
frame's `images`) with the execution-world path and pixel size it read itself; the program
reaches it as a read-only `Image` through `Image.get(attachment_id)`. Programs cannot make
Images: an Image is always one the host registered in this process."""

_registry = {}  # attachment id -> Image
_minting = False

# Set by inspect() while it formats: receives each registered Image repr() reaches and returns
# the text that stands for it. Outside inspect() an Image renders as its plain label.
collector = None


def image_label(image):
    return f'[Image {image.attachmentId} {image.width}x{image.height}]'


class Image:
    __slots__ = ('attachmentId', 'path', 'width', 'height')

    def __init__(self, *args, **kwargs):
        if not _minting:
            raise TypeError('Image values are registered by the host: use Image.get(attachment_id)')

    def __setattr__(self, name, value):
        raise AttributeError('Image values are read-only')

    __delattr__ = __setattr__

    @property
    def attachment_id(self):
        return self.attachmentId

    @staticmethod
    def get(attachment_id):
        return _registry.get(str(attachment_id))

    def __repr__(self):
        if collector is not None and is_registered(self):
            return collector(self)
        return image_label(self)

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError('Image values cannot be copied or pickled')


def _set(image, name, value):
    object.__setattr__(image, name, value)


def check_image_descriptor(d):
    """None when the descriptor is usable, else what is wrong with it."""
    if not isinstance(d, dict):
        return 'image descriptors must be objects'
    if not isinstance(d.get('attachmentId'), str) or d['attachmentId'] == '':
        return 'image `attachmentId` must be a non-empty string'
    if not isinstance(d.get('path'), str):
        return 'image `path` must be a string'
    for key in ('width', 'height'):
        value = d.get(key)
        if type(value) is not int or value < 1:
            return 'image `width`/`height` must be positive integers'
    return None


def register_image(d):
    global _minting
    _minting = True
    try:
        image = Image()
    finally:
        _minting = False
    for key in Image.__slots__:
        _set(image, key, d[key])
    _registry[d['attachmentId']] = image
    return image


def is_registered(value):
    return type(value) is Image and _registry.get(value.attachmentId) is value
