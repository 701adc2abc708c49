import type { MediaKind } from './types.ts';

/**
 * What the app writes itself, per language: one table per language it ships, not one English
 * list. Where each string comes from is noted in `chat-export/test/fixtures/SOURCES.md`.
 * Matching is done against the union of all tables (an export is in the language the phone had
 * when exporting, which is not necessarily `device_language_code` at import time).
 */
export interface LanguageTable {
  /** Beginnings of the end-to-end encryption notice (Android writes it without a sender, iOS with one). */
  readonly encryption: readonly string[];
  /** Regex sources (anchored at the start) of the "security code changed" notice. */
  readonly securityCode: readonly string[];
  /** Regex sources of number-change notices. */
  readonly numberChange: readonly string[];
  /** Regex sources of joins, adds, leaves, group creation (lines without a sender). */
  readonly membership: readonly string[];
  /** Whole bodies of deleted messages (a trailing full stop is optional). */
  readonly deleted: readonly string[];
  /** Beginnings of missed-call lines. */
  readonly missedCall: readonly string[];
  /** Android exports without media: the whole body, e.g. `<Media omitted>`. */
  readonly mediaOmitted: readonly string[];
  /** iOS exports without media: whole bodies per kind, e.g. `image omitted`. */
  readonly omitted: Partial<Readonly<Record<MediaKind, readonly string[]>>>;
  /** iOS exports with media: the word in `<attached: 00000035-PHOTO-….jpg>`. */
  readonly attached: readonly string[];
  /** Android exports with media: the words in `IMG-….jpg (file attached)`. */
  readonly fileAttached: readonly string[];
  /** Appended to a message that was edited (after a space), e.g. `<This message was edited>`. */
  readonly edited?: readonly string[];
}

const empty = {
  securityCode: [],
  numberChange: [],
  membership: [],
  missedCall: [],
  mediaOmitted: [],
  omitted: {},
} as const;

export const LANGUAGES: Readonly<Record<string, LanguageTable>> = {
  en: {
    encryption: [
      'Messages and calls are end-to-end encrypted',
      'Messages to this chat and calls are now secured with end-to-end encryption',
      'Messages to this group are now secured with end-to-end encryption',
      'Messages you send to this chat and calls are now secured with end-to-end encryption',
    ],
    securityCode: ['Your security code with .+ changed'],
    numberChange: ['.+ changed their phone number to a new number', '.+ changed to \\+?[\\d ()-]+$'],
    membership: [
      ".+ joined using this group's invite link",
      '.+ added .+',
      '.+ left$',
      '.+ removed .+',
      'You were added',
      '.+ created group .+',
      'You created group .+',
      '.+ changed the subject ',
      '.+ changed this group',
    ],
    deleted: ['This message was deleted', 'You deleted this message'],
    missedCall: [
      'Missed voice call',
      'Missed video call',
      'Missed group voice call',
      'Missed group video call',
    ],
    mediaOmitted: ['<Media omitted>'],
    omitted: {
      image: ['image omitted'],
      video: ['video omitted'],
      audio: ['audio omitted'],
      sticker: ['sticker omitted'],
      gif: ['GIF omitted'],
      contact: ['Contact card omitted'],
      document: ['document omitted'],
    },
    attached: ['attached'],
    fileAttached: ['file attached'],
    edited: ['<This message was edited>'],
  },
  de: {
    encryption: [
      'Nachrichten und Anrufe sind Ende-zu-Ende-verschlüsselt',
      'Nachrichten in diesem Chat sowie Anrufe sind jetzt mit Ende-zu-Ende-Verschlüsselung geschützt',
    ],
    securityCode: ['Deine Sicherheitsnummer für .+ hat sich geändert'],
    numberChange: ['.+ hat die Telefonnummer gewechselt', '.+ hat zu \\+?[\\d ()-]+ gewechselt'],
    membership: [
      '.+ ist der Gruppe über den Einladungslink beigetreten',
      '.+ hat .+ hinzugefügt',
      '.+ hat die Gruppe verlassen',
      '.+ hat die Gruppe .+ erstellt',
      'Du wurdest hinzugefügt',
    ],
    deleted: ['Diese Nachricht wurde gelöscht', 'Du hast diese Nachricht gelöscht'],
    missedCall: ['Verpasster Sprachanruf', 'Verpasster Videoanruf'],
    mediaOmitted: ['<Medien ausgeschlossen>'],
    omitted: {
      image: ['Bild weggelassen'],
      video: ['Video weggelassen'],
      audio: ['Audio weggelassen'],
      sticker: ['Sticker weggelassen'],
      gif: ['GIF weggelassen'],
      contact: ['Kontaktkarte weggelassen'],
      document: ['Dokument weggelassen'],
    },
    attached: ['Anhang'],
    fileAttached: ['Datei angehängt'],
  },
  es: {
    encryption: ['Los mensajes y las llamadas están cifrados de extremo a extremo'],
    securityCode: ['Cambió tu código de seguridad con .+'],
    numberChange: ['.+ cambió su número de teléfono', '.+ cambió a \\+?[\\d ()-]+$'],
    membership: [
      '.+ se unió usando el enlace de invitación de este grupo',
      '.+ añadió a .+',
      '.+ salió del grupo',
      '.+ creó el grupo .+',
      'Te añadieron',
    ],
    deleted: ['Se eliminó este mensaje', 'Eliminaste este mensaje', 'Este mensaje fue eliminado'],
    missedCall: ['Llamada perdida', 'Llamada de voz perdida', 'Videollamada perdida'],
    mediaOmitted: ['<Multimedia omitido>'],
    omitted: {
      image: ['imagen omitida'],
      video: ['video omitido'],
      audio: ['audio omitido'],
      sticker: ['sticker omitido'],
      gif: ['GIF omitido'],
      contact: ['tarjeta de contacto omitida'],
      document: ['documento omitido'],
    },
    attached: ['adjunto'],
    fileAttached: ['archivo adjunto', 'archivo adjuntado'],
  },
  pt: {
    encryption: [
      'As mensagens e as chamadas são protegidas com a criptografia de ponta a ponta',
      'As mensagens e chamadas são encriptadas ponto a ponto',
    ],
    securityCode: [
      'Seu código de segurança com .+ mudou',
      'O seu código de segurança partilhado com .+ mudou',
    ],
    numberChange: ['.+ mudou seu número de telefone', '.+ mudou para \\+?[\\d ()-]+$'],
    membership: [
      '.+ entrou usando o link de convite deste grupo',
      '.+ adicionou .+',
      '.+ saiu$',
      '.+ criou o grupo .+',
      'Você foi adicionado',
    ],
    deleted: [
      'Mensagem apagada',
      'Esta mensagem foi apagada',
      'Você apagou esta mensagem',
      'Apagou esta mensagem',
    ],
    missedCall: ['Chamada de voz perdida', 'Chamada de vídeo perdida'],
    mediaOmitted: ['<Mídia oculta>', '<Multimédia omitida>'],
    omitted: {
      image: ['imagem ocultada'],
      video: ['vídeo omitido'],
      audio: ['áudio ocultado'],
      sticker: ['figurinha omitida'],
      gif: ['GIF omitido'],
      document: ['documento omitido'],
    },
    attached: ['anexado', 'anexo'],
    fileAttached: ['arquivo anexado', 'ficheiro anexado'],
  },
  fr: {
    encryption: ['Les messages et les appels sont chiffrés de bout en bout'],
    securityCode: ['Votre code de sécurité avec .+ a changé'],
    numberChange: ['.+ a changé de numéro'],
    membership: [
      ".+ a rejoint ce groupe via le lien d'invitation",
      '.+ a ajouté .+',
      '.+ est parti',
      '.+ a créé le groupe .+',
      'Vous avez été ajouté',
    ],
    deleted: ['Ce message a été supprimé', 'Vous avez supprimé ce message'],
    missedCall: ['Appel vocal manqué', 'Appel vidéo manqué'],
    mediaOmitted: ['<Médias omis>'],
    omitted: {
      image: ['image absente'],
      video: ['vidéo absente'],
      audio: ['audio omis'],
      sticker: ['autocollant omis'],
      document: ['document omis'],
    },
    attached: ['pièce jointe'],
    fileAttached: ['fichier joint'],
  },
  it: {
    encryption: ['I messaggi e le chiamate sono crittografati end-to-end'],
    securityCode: ['Il tuo codice di sicurezza con .+ è cambiato'],
    numberChange: ['.+ ha cambiato numero'],
    membership: [
      ".+ si è unito tramite il link d'invito",
      '.+ ha aggiunto .+',
      '.+ è uscito',
      '.+ ha creato il gruppo .+',
    ],
    deleted: ['Questo messaggio è stato eliminato', 'Hai eliminato questo messaggio'],
    missedCall: ['Chiamata vocale persa', 'Videochiamata persa'],
    mediaOmitted: ['<Media omessi>'],
    omitted: {
      image: ['immagine omessa'],
      video: ['video omesso'],
      audio: ['audio omesso'],
      sticker: ['sticker omesso'],
      document: ['documento omesso'],
    },
    attached: ['allegato'],
    fileAttached: ['file allegato'],
  },
  nl: {
    ...empty,
    encryption: ['Berichten en gesprekken worden end-to-end versleuteld'],
    securityCode: ['Uw beveiligingscode voor .+ is gewijzigd'],
    membership: ['.+ heeft .+ toegevoegd', '.+ heeft de groep verlaten'],
    deleted: ['Dit bericht is verwijderd', 'U hebt dit bericht verwijderd', 'Je hebt dit bericht verwijderd'],
    mediaOmitted: ['<Media weggelaten>'],
    attached: ['bijgevoegd'],
    fileAttached: ['bestand bijgevoegd'],
  },
  id: {
    ...empty,
    encryption: ['Pesan dan panggilan terenkripsi secara end-to-end'],
    membership: ['.+ bergabung menggunakan tautan undangan grup ini', '.+ menambahkan .+', '.+ keluar$'],
    deleted: ['Pesan ini telah dihapus', 'Pesan ini dihapus', 'Anda menghapus pesan ini'],
    missedCall: ['Panggilan suara tak terjawab', 'Panggilan video tak terjawab'],
    mediaOmitted: ['<Media tidak disertakan>'],
    attached: ['terlampir', 'dilampir'],
    fileAttached: ['file terlampir'],
  },
  tr: {
    ...empty,
    encryption: ['Mesajlar ve aramalar uçtan uca şifrelidir'],
    deleted: ['Bu mesaj silindi', 'Bu mesajı sildiniz'],
    mediaOmitted: ['<Medya dahil edilmedi>'],
    attached: ['eklendi'],
    fileAttached: ['dosya ekli'],
  },
  ru: {
    ...empty,
    encryption: ['Сообщения и звонки защищены сквозным шифрованием'],
    deleted: ['Данное сообщение удалено', 'Вы удалили данное сообщение', 'Вы удалили это сообщение'],
    mediaOmitted: ['<Без медиафайлов>'],
    attached: ['прикреплено'],
    fileAttached: ['файл добавлен'],
  },
  ar: {
    ...empty,
    encryption: ['الرسائل والمكالمات مشفرة تمامًا بين الطرفين'],
    deleted: ['تم حذف هذه الرسالة', 'لقد حذَفت هذه الرسالة', 'أنت حذفت هذه الرسالة'],
    mediaOmitted: ['<تم استبعاد الوسائط>'],
    attached: ['المُرفق'],
    fileAttached: ['الملف مرفق'],
  },
  fa: {
    ...empty,
    encryption: ['پیامها و تماسها سرتاسر رمزگذاری شدهاند'],
    deleted: ['این پیام حذف شد', 'این پیام حذف شده است'],
    mediaOmitted: ['<رسانه حذف شد>'],
    attached: ['پیوست'],
    fileAttached: [],
  },
  ja: {
    ...empty,
    encryption: ['メッセージと通話はエンドツーエンド暗号化されています'],
    deleted: ['このメッセージは削除されました', 'このメッセージを削除しました'],
    attached: ['添付ファイル'],
    fileAttached: ['添付ファイル有り'],
  },
  ko: {
    ...empty,
    encryption: ['메시지 및 전화는 종단간 암호화되어 안전합니다'],
    deleted: ['이 메시지는 삭제되었습니다', '삭제한 메시지입니다'],
    attached: ['첨부됨'],
    fileAttached: ['파일 첨부됨'],
  },
  zh: {
    ...empty,
    encryption: ['消息和通话都进行端到端加密', '訊息和通話經端對端加密'],
    deleted: ['这条消息已被删除', '此訊息已刪除'],
    attached: ['附件'],
    fileAttached: ['文件附件', '附件檔案'],
  },
  th: {
    ...empty,
    encryption: ['ข้อความและการโทรได้รับการเข้ารหัสจากต้นทางถึงปลายทาง'],
    deleted: ['ข้อความนี้ถูกลบแล้ว', 'คุณได้ลบข้อความนี้'],
    attached: ['แนบ'],
    fileAttached: ['ไฟล์ที่แนบ'],
  },
  fi: {
    ...empty,
    encryption: ['Viestit ja puhelut salataan täysin'],
    deleted: ['Tämä viesti poistettiin', 'Poistit tämän viestin'],
    attached: ['liite'],
    fileAttached: ['liitetiedosto'],
  },
  hi: {
    ...empty,
    encryption: ['मैसेजेस और कॉल्स एंड-टू-एंड एन्क्रिप्टेड हैं'],
    deleted: ['यह मैसेज डिलीट कर दिया गया है', 'आपने यह मैसेज डिलीट किया'],
    attached: ['अटैच किया गया'],
    fileAttached: ['फाइल संलग्न'],
  },
};
