"""The globals of JavaScript's environments and the members of its standard namespaces, as
lists that ship with the package (read nowhere at run time; nothing is evaluated).

A global of any environment counts: the language's own (ECMAScript 2025 and proposals at stage
3 that engines ship), Node's, the browser's and web workers', and the test runners' (Jest,
Mocha, Vitest, Jasmine). Browser interfaces are too many to list: a name of their shape
(:data:`WEB_INTERFACE`) is not flagged either.
"""

from __future__ import annotations

import re

_ECMASCRIPT = """
AggregateError Array ArrayBuffer Atomics BigInt BigInt64Array BigUint64Array Boolean DataView
Date Error EvalError FinalizationRegistry Float16Array Float32Array Float64Array Function
Infinity Int16Array Int32Array Int8Array Intl Iterator JSON Map Math NaN Number Object Promise
Proxy RangeError ReferenceError Reflect RegExp Set SharedArrayBuffer String Symbol SyntaxError
TypeError URIError Uint16Array Uint32Array Uint8Array Uint8ClampedArray WeakMap WeakRef WeakSet
WebAssembly decodeURI decodeURIComponent encodeURI encodeURIComponent escape eval globalThis
isFinite isNaN parseFloat parseInt undefined unescape arguments AsyncIterator DisposableStack
AsyncDisposableStack SuppressedError
"""

_NODE = """
AbortController AbortSignal Blob BroadcastChannel Buffer ByteLengthQueuingStrategy
CompressionStream CountQueuingStrategy Crypto CryptoKey CustomEvent DOMException
DecompressionStream Event EventTarget File FormData Headers MessageChannel MessageEvent
MessagePort Navigator Performance PerformanceEntry PerformanceMark PerformanceMeasure
PerformanceObserver PerformanceObserverEntryList PerformanceResourceTiming
ReadableByteStreamController
ReadableStream ReadableStreamBYOBReader ReadableStreamBYOBRequest ReadableStreamDefaultController
ReadableStreamDefaultReader Request Response SubtleCrypto TextDecoder TextDecoderStream
TextEncoder TextEncoderStream TransformStream TransformStreamDefaultController URL
URLSearchParams WebSocket WritableStream WritableStreamDefaultController
WritableStreamDefaultWriter __dirname __filename atob btoa clearImmediate clearInterval
clearTimeout console crypto exports fetch global module navigator performance process
queueMicrotask require setImmediate setInterval setTimeout structuredClone Bun Deno
"""

_BROWSER = """
window self document location history navigator screen localStorage sessionStorage indexedDB
caches customElements visualViewport frames parent top opener name status origin closed
length event external chrome alert confirm prompt print open close stop focus blur postMessage
addEventListener removeEventListener dispatchEvent requestAnimationFrame
cancelAnimationFrame requestIdleCallback cancelIdleCallback getComputedStyle getSelection
matchMedia scroll scrollTo scrollBy scrollX scrollY pageXOffset pageYOffset innerWidth
innerHeight outerWidth outerHeight devicePixelRatio screenX screenY screenLeft screenTop
isSecureContext crossOriginIsolated reportError createImageBitmap importScripts onmessage
onerror onload ServiceWorker Worker SharedWorker Image Audio Option XMLHttpRequest FileReader
FileList DOMParser XMLSerializer Notification MutationObserver IntersectionObserver
ResizeObserver PerformanceObserver Path2D OffscreenCanvas ImageData ImageBitmap
trustedTypes scheduler webkitURL define
"""

_TESTS = """
describe it test expect jest beforeEach afterEach beforeAll afterAll before after context
suite setup teardown suiteSetup suiteTeardown xit xdescribe fit fdescribe vi jasmine spyOn
pending fail assert chai sinon
"""

#: Contextual keywords tree-sitter may read as names (``await`` outside an async function).
_KEYWORDS = """
await yield async let static of get set as from target meta implements interface package
private protected public type declare namespace abstract readonly keyof infer satisfies
accessor enum override
"""

#: Every global name not flagged, of any environment.
GLOBALS = frozenset((_ECMASCRIPT + _NODE + _BROWSER + _TESTS + _KEYWORDS).split())

#: A browser interface's name (``HTMLCanvasElement``, ``SVGPathElement``, ``RTCPeerConnection``).
WEB_INTERFACE = re.compile(
    r"^(?:HTML|SVG|DOM|CSS|Web|RTC|IDB|XML|XPath|Media|Audio|Video|Speech|Text|Readable|"
    r"Writable|Transform|Performance|Navigator|Screen|Window|Worker|Service|Shared|Message|"
    r"Mouse|Keyboard|Touch|Pointer|Drag|Focus|Input|Wheel|Composition|Animation|Transition|"
    r"Clipboard|Storage|Notification|Push|Payment|Gamepad|File|Abort|Broadcast|Crypto|"
    r"Geolocation|Intersection|Mutation|Resize|Report|Range|Selection|Node|Element|Document|"
    r"Event|Offscreen|Canvas|WebGL|GPU|XR|Bluetooth|USB|Serial|HID|MIDI|Credential|PublicKey|"
    r"Permission|Cache|Form|History|Location|Shadow|Custom|Page|PopState|Hash|Progress|Close|"
    r"Idle|Lock|Sensor|Battery|Network|Presentation|Picture|Visual|Font|Highlight|Trusted|Task|"
    r"Compression|Decompression|Encoded|Analyser|Oscillator|Gain|Delay|Convolver|Biquad|"
    r"Dynamics|Stereo|Channel|Constant|Periodic|ANGLE|OES|WEBGL|EXT_|Touch|Blob|Image|Path|"
    r"Server|Source|Track|Caret|Static|Tree|Named|Attr|Comment|Processing|Character|Dedicated|"
    r"Origin|Blob|Deprecation|Intervention|Layout|Largest|Navigation|Resource|Scroll|Sub|"
    r"Before|Error|Security|Submit|Toggle|Hash|Window|Viewport|View|XSLT)[A-Za-z0-9_]*$"
    r"|[A-Za-z0-9]*(?:Event|Element|Observer|Error|List|Map|Collection)$"
)

#: The members of the standard namespaces and constructors whose members can be known (the
#: static ones: ``Math.max``, ``Object.keys``, ``JSON.parse``); instances are not checked.
MEMBERS: dict[str, frozenset[str]] = {
    name: frozenset(members.split())
    for name, members in {
        "Math": "abs acos acosh asin asinh atan atanh atan2 ceil cbrt expm1 clz32 cos cosh exp"
        " floor fround f16round hypot imul log log1p log2 log10 max min pow random round sign sin"
        " sinh sqrt tan tanh trunc sumPrecise E LN10 LN2 LOG10E LOG2E PI SQRT1_2 SQRT2",
        "JSON": "parse stringify rawJSON isRawJSON",
        "Reflect": "defineProperty deleteProperty apply construct get getOwnPropertyDescriptor"
        " getPrototypeOf has isExtensible ownKeys preventExtensions set setPrototypeOf",
        "Object": "assign getOwnPropertyDescriptor getOwnPropertyDescriptors"
        " getOwnPropertyNames getOwnPropertySymbols hasOwn is preventExtensions seal create"
        " defineProperties defineProperty freeze getPrototypeOf setPrototypeOf isExtensible"
        " isFrozen isSealed keys entries fromEntries values groupBy prototype length name"
        " call apply bind toString constructor",
        "Array": "isArray from fromAsync of prototype length name call apply bind toString"
        " constructor",
        "Number": "isFinite isInteger isNaN isSafeInteger parseFloat parseInt MAX_VALUE"
        " MIN_VALUE NaN NEGATIVE_INFINITY POSITIVE_INFINITY MAX_SAFE_INTEGER MIN_SAFE_INTEGER"
        " EPSILON prototype length name call apply bind toString constructor",
        "Promise": "all allSettled any race resolve reject withResolvers try prototype length"
        " name call apply bind toString constructor",
        "String": "fromCharCode fromCodePoint raw prototype length name call apply bind toString"
        " constructor",
    }.items()
}
