/**
 * createLinkedPair: two in-memory ByteChannels cross-wired, so a client and a host can talk
 * without a process or a socket. Bytes arrive asynchronously and in order, like a pipe.
 */
import type { ByteChannel, EndDetails, Unsubscribe } from "../framing/byteChannel.js";

/**
 * One end of a linked pair, with a way to cut the pipe abruptly (a simulated crash).
 *
 * @example
 * ```ts
 * const [clientSide, hostSide] = createLinkedPair();
 * const client = connect(clientSide);
 * hostSide.destroy({ exitCode: 1, reason: "simulated crash" }); // pending work settles as connectionClosed
 * ```
 */
export interface LinkedChannel extends ByteChannel {
  /** End both directions at once, as a crashed peer would; the other end sees `onEnd(details)`. */
  destroy(details?: EndDetails): void;
}

type Listener<T> = (value: T) => void;

class Side {
  readonly data = new Set<Listener<Uint8Array>>();
  readonly end = new Set<Listener<EndDetails | undefined>>();
  readonly error = new Set<Listener<unknown>>();
  ended = false;
}

function subscribe<T>(set: Set<Listener<T>>, listener: Listener<T>): Unsubscribe {
  set.add(listener);
  return () => set.delete(listener);
}

/**
 * Make two linked channels: what one writes, the other reads.
 *
 * @example
 * ```ts
 * const [clientSide, hostSide] = createLinkedPair();
 * const client = connect(clientSide);
 * ```
 */
export function createLinkedPair(): [LinkedChannel, LinkedChannel] {
  const a = new Side();
  const b = new Side();
  const make = (self: Side, peer: Side): LinkedChannel => {
    const endPeer = (details?: EndDetails) => {
      if (peer.ended) return;
      peer.ended = true;
      queueMicrotask(() => {
        for (const listener of [...peer.end]) listener(details);
      });
    };
    return {
      onData: (listener) => subscribe(self.data, listener),
      onEnd: (listener) => subscribe(self.end, listener),
      onError: (listener) => subscribe(self.error, listener),
      write(bytes) {
        if (peer.ended) throw new Error("write after end: the linked peer has closed (EPIPE)");
        // A copy: the writer may reuse its buffer before the peer reads (Buffer#slice is a view, not a copy).
        const copy = new Uint8Array(bytes);
        // Bytes written before an end or a crash still arrive, before the end notice: a pipe's
        // buffered bytes outlive the writer.
        queueMicrotask(() => {
          for (const listener of [...peer.data]) listener(copy);
        });
      },
      end: () => endPeer(),
      destroy(details) {
        endPeer(details);
        if (!self.ended) {
          self.ended = true;
          queueMicrotask(() => {
            for (const listener of [...self.end]) listener(details);
          });
        }
      },
    };
  };
  return [make(a, b), make(b, a)];
}
