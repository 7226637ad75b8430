export declare const DOCX_MAX_XML_BYTES: number;
export declare const PDF_MAX_STREAM_BYTES: number;
export declare class TooLargeError extends Error {}
export declare function checkDocx(buf: Buffer, max?: number): void;
export declare function checkPdf(buf: Buffer, max?: number): void;
