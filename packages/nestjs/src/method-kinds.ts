import { types } from 'node:util';
import {
  MESSAGE_MAPPING_METADATA,
  PATH_METADATA,
  PATTERN_HANDLER_METADATA,
  RESOLVER_PROPERTY_METADATA,
  RESOLVER_REFERENCE_METADATA,
  RESOLVER_TYPE_METADATA,
  type InstanceWrapper,
} from './nest-internals';
import { Observable } from 'rxjs';
import { ResilienceError } from '@ballast/core';

/*
 * What kind of method the explorer finds on a provider or controller, read from other packages' metadata (the keys
 * of optional packages are spelled out in nest-internals.ts, so none of them is a dependency).
 */

/**
 * A GraphQL resolver method (`@Query`, `@Mutation`, `@ResolveField`, `@ResolveReference`) of `@nestjs/graphql`.
 * Subscriptions are left out: their resolver returns an async iterator, which no policy wraps.
 */
export function isResolverMethod(method: unknown): boolean {
  if (typeof method !== 'function') return false;
  const type: unknown = Reflect.getMetadata(RESOLVER_TYPE_METADATA, method);
  return (
    (typeof type === 'string' && type !== 'Subscription') ||
    Reflect.getMetadata(RESOLVER_PROPERTY_METADATA, method) === true ||
    Reflect.getMetadata(RESOLVER_REFERENCE_METADATA, method) === true
  );
}

/** A GraphQL `@Subscription` resolver method of `@nestjs/graphql`. */
export function isSubscriptionMethod(method: unknown): boolean {
  return (
    typeof method === 'function' && Reflect.getMetadata(RESOLVER_TYPE_METADATA, method) === 'Subscription'
  );
}

/** A WebSocket gateway's `@SubscribeMessage` handler. */
export function isMessageHandler(method: object): boolean {
  return Reflect.getMetadata(MESSAGE_MAPPING_METADATA, method) === true;
}

export function isHandler(method: object): boolean {
  return Reflect.getMetadata(PATH_METADATA, method) !== undefined || isMicroserviceHandler(method);
}

/** A microservice handler (`@MessagePattern()`, `@EventPattern()`, `@GrpcMethod()` set the handler type). */
export function isMicroserviceHandler(method: object): boolean {
  return Reflect.getMetadata(PATTERN_HANDLER_METADATA, method) !== undefined;
}

/**
 * The prototype of the class a proxy provider stands for: a factory provider whose token is a class and whose value is
 * a `Proxy`, like nestjs-cls's `@InjectableProxy()` classes (`ClsModule.forFeature(RequestUser)`). Its value forwards
 * every property to an instance created per request (`moduleRef.create(RequestUser)`), which the explorer never sees,
 * and outside a request its prototype reads as `Object.prototype`: such a class's decorated methods silently ran
 * without their policy, and a misspelled policy passed the bootstrap check. Its prototype is wrapped instead, as for
 * request-scoped providers.
 */
export function proxiedClassPrototype(wrapper: InstanceWrapper): object | undefined {
  if (!wrapper.isFactory || !types.isProxy(wrapper.instance)) return undefined;
  const token: unknown = wrapper.token;
  if (typeof token !== 'function') return undefined;
  const proto: unknown = (token as { prototype?: unknown }).prototype;
  return isObject(proto) ? proto : undefined;
}

/**
 * The name of the type a decorated provider method is declared to return, when that type can be neither a Promise
 * nor an Observable (`number`, `Product[]`, a class, a `Subject`): wrapped, the method returns a Promise, so its callers would
 * silently get one — a JSON body of `{}`, a `Promise` where a number was expected. `design:returntype` is emitted
 * for decorated methods; it is absent for `void` and for undeclared types, `Object` for `unknown`, unions and
 * interfaces (`AsyncGenerator`): those pass.
 */
export function declaredNonPromise(proto: object, name: string): string | undefined {
  const type: unknown = Reflect.getMetadata('design:returntype', proto, name);
  if (typeof type !== 'function' || type === Object || type === Promise || type === Observable)
    return undefined;
  const prototype: unknown = (type as { prototype?: unknown }).prototype;
  // A thenable class (a Promise library) is a Promise to its callers. A Subject, or an Observable of another copy of
  // rxjs, is not: only `Observable` itself is wrapped as a lazy Observable, the rest would fail at the first call.
  if (isObject(prototype) && typeof (prototype as { then?: unknown }).then === 'function') return undefined;
  return (type as { name?: string }).name || 'a type that is not a Promise';
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

export function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

/** `design:returntype` is emitted for decorated methods: `Observable` when the method is typed to return one. */
export function returnsObservable(proto: object, name: string): boolean {
  return Reflect.getMetadata('design:returntype', proto, name) === Observable;
}

/**
 * Without `design:returntype` (a type-only import of Observable, or a compiler that emits no decorator metadata)
 * an Observable method would be wrapped as a Promise-returning one, silently changing what callers get.
 */
export function observableWithoutMetadata(method: string): ResilienceError {
  return new ResilienceError({
    kind: 'configuration',
    message:
      `@Resilient method ${method}() returned an Observable, but its declared return type was not seen at bootstrap. ` +
      "Declare it as ': Observable<T>' with a value import (import { Observable } from 'rxjs'), with " +
      'emitDecoratorMetadata on, so the method is wrapped as a lazy Observable.',
  });
}
