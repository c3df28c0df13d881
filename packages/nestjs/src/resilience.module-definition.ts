import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ResilienceModuleOptions } from './resilience-module-options.interface';

/**
 * `forRoot` / `forRootAsync` come from Nest's builder (useFactory, useClass, useExisting, imports, inject) instead of
 * hand-written copies. The module is always global: one `Resilience` per application, so every module's decorators
 * share its breakers and limits.
 */
export const {
  ConfigurableModuleClass: ConfigurableResilienceModule,
  MODULE_OPTIONS_TOKEN: RESILIENCE_MODULE_OPTIONS,
  OPTIONS_TYPE: RESILIENCE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: RESILIENCE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ResilienceModuleOptions>({ moduleName: 'Resilience' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createResilienceOptions')
  .setExtras({}, (definition) => ({ ...definition, global: true }))
  .build();
