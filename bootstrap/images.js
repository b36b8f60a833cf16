// Registered images. The host announces each attachment with an `image-register` frame (or the
// run frame's `images`) carrying the execution-world path and pixel size it read itself; the
// program reaches it as a frozen `Image` value through `Image.get(attachmentId)`. Programs cannot
// construct Images: an Image is always something the host registered in this process, and
// references live until the process ends (retained environments keep them across runs).

import util from 'node:util';

const registry = new Map(); // attachmentId -> Image
let minting = false;

// Set by inspect() while it formats: receives each Image util.inspect reaches and returns the
// text that stands for it. Outside inspect() an Image renders as its plain label.
let collector = null;

export function imageLabel(image) {
  return `[Image ${image.attachmentId} ${image.width}x${image.height}]`;
}

export class Image {
  constructor() {
    if (!minting) throw new TypeError('Image values are registered by the host: use Image.get(attachmentId)');
  }

  static get(attachmentId) {
    return registry.get(String(attachmentId));
  }

  // util.inspect reaches Images wherever Node's formatting goes (arrays, objects, Map entries,
  // Set values, enumerable Symbol properties), and never where a custom inspection method of an
  // enclosing object decides not to go.
  [util.inspect.custom]() {
    return collector !== null && isRegistered(this) ? collector(this) : imageLabel(this);
  }
}
Object.freeze(Image.prototype);
Object.freeze(Image);

function isPositiveInteger(value) {
  return Number.isSafeInteger(value) && value > 0;
}

// Returns null when the descriptor is usable, else what is wrong with it.
export function checkImageDescriptor(d) {
  if (d === null || typeof d !== 'object') return 'image descriptors must be objects';
  if (typeof d.attachmentId !== 'string' || d.attachmentId === '') return 'image `attachmentId` must be a non-empty string';
  if (typeof d.path !== 'string') return 'image `path` must be a string';
  if (!isPositiveInteger(d.width) || !isPositiveInteger(d.height)) return 'image `width`/`height` must be positive integers';
  return null;
}

// Registers an image; returns the new frozen instance. The host registers an attachment id once
// per process (a repeated registration of the same file is not sent again).
export function registerImage({ attachmentId, path, width, height }) {
  minting = true;
  let image;
  try {
    image = new Image();
  } finally {
    minting = false;
  }
  Object.defineProperties(image, {
    attachmentId: { value: attachmentId, enumerable: true },
    path: { value: path, enumerable: true },
    width: { value: width, enumerable: true },
    height: { value: height, enumerable: true },
  });
  Object.freeze(image);
  registry.set(attachmentId, image);
  return image;
}

export function isRegistered(value) {
  return value instanceof Image && registry.get(value.attachmentId) === value;
}

// Runs format() with `onImage(image) -> text` receiving every registered Image it reaches.
export function collectImages(onImage, format) {
  const saved = collector;
  collector = onImage;
  try {
    return format();
  } finally {
    collector = saved;
  }
}
