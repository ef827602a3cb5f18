import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { InvalidFieldsException } from '../../common/api/api-errors';

/** A path parameter that is a positive integer id (at most 15 digits); 400 naming the parameter otherwise. */
@Injectable()
export class PositiveIntPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    if (!/^[1-9][0-9]{0,14}$/.test(value)) throw InvalidFieldsException.of(metadata.data ?? 'id', 'must be a positive integer');
    return Number(value);
  }
}
