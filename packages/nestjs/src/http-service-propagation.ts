import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { installAxiosPropagation, type AxiosLike } from '@ballast/core';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition';
import type { ResilienceModuleOptions } from './resilience-module-options.interface';

/**
 * `headers.propagate: true`: every `@nestjs/axios` `HttpService` of the application sends the deadline and
 * criticality on (core's `installAxiosPropagation` on its `axiosRef`), under the same header names the module reads
 * inbound, so a chain of services shares one budget and one criticality (SPEC §14.4). The HttpService instances are
 * found by shape (an `axiosRef` with interceptors), so `@nestjs/axios` stays an optional package. @internal
 */
@Injectable()
export class HttpServicePropagation implements OnModuleInit, OnApplicationShutdown {
  readonly #uninstall: (() => void)[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options: ResilienceModuleOptions,
  ) {}

  onModuleInit(): void {
    const headers = this.options.headers;
    if (headers?.propagate !== true) return;
    const names = { deadline: headers.deadline, criticality: headers.criticality };
    const seen = new Set<unknown>();
    for (const wrapper of this.discovery.getProviders()) {
      const axios = axiosOf(wrapper.isDependencyTreeStatic() ? wrapper.instance : undefined);
      if (axios === undefined || seen.has(axios)) continue;
      seen.add(axios);
      this.#uninstall.push(installAxiosPropagation(axios, names));
    }
  }

  onApplicationShutdown(): void {
    for (const uninstall of this.#uninstall.splice(0)) uninstall();
  }
}

/** The axios instance of an `HttpService` (`axiosRef`), recognised by its interceptor lists. */
function axiosOf(instance: unknown): AxiosLike | undefined {
  const ref = (instance as { axiosRef?: unknown } | null | undefined)?.axiosRef;
  const interceptors = (ref as { interceptors?: Record<string, { use?: unknown }> } | null | undefined)
    ?.interceptors;
  return typeof interceptors?.['request']?.use === 'function' &&
    typeof interceptors['response']?.use === 'function'
    ? (ref as AxiosLike)
    : undefined;
}
