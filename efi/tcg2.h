/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * EFI_TCG2_PROTOCOL, declared here because gnu-efi 3.0.15 does not ship it.
 * Layouts from the TCG EFI Protocol Specification (rev 00.13, section 6)
 * and EDK2's Tcg2Protocol.h, which is what firmware actually implements.
 */
#ifndef MSHIM_TCG2_H
#define MSHIM_TCG2_H

/* Included after <efi.h> by mshim.h. */

#define MSHIM_TCG2_PROTOCOL_GUID \
        { 0x607f766c, 0x7455, 0x42be, { 0x93, 0x0b, 0xe4, 0xd7, 0x6d, 0xb2, 0x72, 0x0f } }

#define MSHIM_TCG2_EVENT_HEADER_VERSION 1

/* HashLogExtendEvent flag (TCG EFI Protocol Spec 6.6.5): the data is a PE
 * image in memory, hash its Authenticode ranges, as LoadImage's PCR 4
 * events do. */
#define MSHIM_TCG2_PE_COFF_IMAGE 0x10

typedef struct {
        UINT8 Major;
        UINT8 Minor;
} MSHIM_TCG2_VERSION;

/* NOT packed: EDK2 declares it with natural alignment, and firmware fills it
 * that way. A packed declaration reads TPMPresentFlag from the wrong byte. */
typedef struct {
        UINT8 Size;
        MSHIM_TCG2_VERSION StructureVersion;
        MSHIM_TCG2_VERSION ProtocolVersion;
        UINT32 HashAlgorithmBitmap;
        UINT32 SupportedEventLogs;
        BOOLEAN TPMPresentFlag;
        UINT16 MaxCommandSize;
        UINT16 MaxResponseSize;
        UINT32 ManufacturerID;
        UINT32 NumberOfPCRBanks;
        UINT32 ActivePcrBanks;
} MSHIM_TCG2_BOOT_SERVICE_CAPABILITY;

/* Packed wire structures (TCG EFI Protocol Spec 6.6.5): Size = 18 + event bytes. */
typedef struct {
        UINT32 HeaderSize;      /* sizeof(this header) = 14 */
        UINT16 HeaderVersion;   /* 1 */
        UINT32 PCRIndex;
        UINT32 EventType;
} __attribute__((packed)) MSHIM_TCG2_EVENT_HEADER;

typedef struct {
        UINT32 Size;            /* whole structure, including Event[] */
        MSHIM_TCG2_EVENT_HEADER Header;
        UINT8 Event[];
} __attribute__((packed)) MSHIM_TCG2_EVENT;

_Static_assert(sizeof(MSHIM_TCG2_EVENT_HEADER) == 14, "EFI_TCG2_EVENT_HEADER is 14 bytes");
_Static_assert(sizeof(MSHIM_TCG2_EVENT) == 18, "EFI_TCG2_EVENT without data is 18 bytes");

typedef struct _MSHIM_TCG2_PROTOCOL MSHIM_TCG2_PROTOCOL;

typedef EFI_STATUS (EFIAPI *MSHIM_TCG2_GET_CAPABILITY)(
        MSHIM_TCG2_PROTOCOL *This, MSHIM_TCG2_BOOT_SERVICE_CAPABILITY *ProtocolCapability);
typedef EFI_STATUS (EFIAPI *MSHIM_TCG2_HASH_LOG_EXTEND_EVENT)(
        MSHIM_TCG2_PROTOCOL *This, UINT64 Flags, EFI_PHYSICAL_ADDRESS DataToHash,
        UINT64 DataToHashLen, MSHIM_TCG2_EVENT *EfiTcgEvent);

/* TCG EFI Protocol Spec 6.7: one TPM command in, its response out. The
 * response's length is only in its own header (the caller checks it
 * against OutputParameterBlockSize before trusting it). */
typedef EFI_STATUS (EFIAPI *MSHIM_TCG2_SUBMIT_COMMAND)(
        MSHIM_TCG2_PROTOCOL *This, UINT32 InputParameterBlockSize, UINT8 *InputParameterBlock,
        UINT32 OutputParameterBlockSize, UINT8 *OutputParameterBlock);

/* Only the members mshim calls are typed; the rest keep their slots. */
struct _MSHIM_TCG2_PROTOCOL {
        MSHIM_TCG2_GET_CAPABILITY GetCapability;
        VOID *GetEventLog;
        MSHIM_TCG2_HASH_LOG_EXTEND_EVENT HashLogExtendEvent;
        MSHIM_TCG2_SUBMIT_COMMAND SubmitCommand;
        VOID *GetActivePcrBanks;
        VOID *SetActivePcrBanks;
        VOID *GetResultOfSetActivePcrBanks;
};

#endif
